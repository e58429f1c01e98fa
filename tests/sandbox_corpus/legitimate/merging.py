# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% reindex_plasma_onto_mag_nearest
p = sources["plasma"].reindex(df.index, method="nearest", tolerance=pd.Timedelta("2min"))
result = df.join(p)

# %% merge_asof
left = df.reset_index().rename(columns={"index": "time"})
right = sources["plasma"].reset_index().rename(columns={"index": "time"})
merged = pd.merge_asof(left, right, on="time", direction="nearest")
result = merged.set_index("time")

# %% concat_columns_after_resample
result = pd.concat([df.resample("5min").mean(), sources["plasma"].resample("5min").mean()], axis=1)

# %% dynamic_pressure
p = sources["plasma"]
result = (1.6726e-6 * p["density"] * p["speed"] ** 2).to_frame("pdyn_npa")

# %% plasma_beta
plasma = sources["plasma"].resample("1min").mean().interpolate()
b2 = (df**2).sum(axis=1)
joined = pd.concat([plasma, b2.rename("b2")], axis=1).dropna()
beta = 4.03e-11 * joined["density"] * joined["temperature"] / (joined["b2"] * 1e-18 / 1e-18)
result = beta.to_frame("beta")

# %% alfven_speed
plasma = sources["plasma"].reindex(df.index, method="nearest")
bmag = np.sqrt((df**2).sum(axis=1))
va = 21.8 * bmag / np.sqrt(plasma["density"])
result = va.to_frame("v_alfven_kms")

# %% combine_first_fill
a = df["bx"].where(df.index.minute % 5 != 0)
result = a.combine_first(df["by"]).to_frame("filled")

# %% align_inner
a, b = df.align(sources["plasma"].resample("1min").mean(), join="inner", axis=0)
result = pd.concat([a, b], axis=1)

# %% merge_on_rounded_time
m = df.resample("10min").mean()
p = sources["plasma"].resample("10min").mean()
result = m.merge(p, left_index=True, right_index=True, how="outer")
