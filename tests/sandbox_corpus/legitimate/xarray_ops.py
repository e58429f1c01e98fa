# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% spec_mean_over_energy
result = sources["spec"].mean("energy")

# %% spec_select_energy_range
result = sources["spec"].sel(energy=slice(100.0, 5000.0))

# %% spec_resample_time
result = sources["spec"].resample(time="10min").mean()

# %% spec_log_scale
with np.errstate(divide="ignore"):
    result = np.log10(sources["spec"].where(sources["spec"] > 0))

# %% spec_rolling_over_time
result = sources["spec"].rolling(time=5, center=True).mean()

# %% spec_integrate_energy
result = sources["spec"].integrate("energy")

# %% spec_to_dataframe
result = sources["spec"].isel(energy=[0, 5, 10]).to_pandas()

# %% spec_normalise_per_time
s = sources["spec"]
result = s / s.max("energy")

# %% spec_dataarray_data
arr = sources["spec"].data
result = xr.DataArray(
    arr.mean(axis=1), dims="time", coords={"time": sources["spec"]["time"].values}
)

# %% spec_values_inplace_mask
s = sources["spec"].copy()
s.values[s.values < 1.0] = np.nan
result = s

# %% spec_argmax_energy
s = sources["spec"]
result = s["energy"][s.argmax("energy")].drop_vars("energy")

# %% spec_coarsen
result = sources["spec"].coarsen(time=4, boundary="trim").mean()

# %% spec_apply_ufunc
result = xr.apply_ufunc(np.sqrt, sources["spec"])

# %% build_dataarray_from_frame
result = xr.DataArray(
    df.to_numpy(),
    dims=("time", "component"),
    coords={"time": df.index.tz_localize(None), "component": list(df.columns)},
)

# %% spec_interp_like_time
target = sources["spec"].isel(time=slice(0, None, 3))
result = sources["spec"].interp_like(target)

# %% spec_groupby_hour
result = sources["spec"].groupby("time.hour").mean()
