# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% interpolate_time_gaps
gappy = df.copy()
gappy.iloc[100:130] = np.nan
result = gappy.interpolate(method="time", limit=60)

# %% np_interp_onto_grid
t = df.index.asi8.astype(float)
grid = pd.date_range(df.index[0], df.index[-1], freq="90s")
result = pd.DataFrame(
    {c: np.interp(grid.asi8.astype(float), t, df[c]) for c in df.columns}, index=grid
)

# %% cubic_spline
t = (df.index - df.index[0]).total_seconds().to_numpy()
cs = scipy.interpolate.CubicSpline(t[::10], df["bx"].to_numpy()[::10])
result = pd.Series(cs(t), index=df.index, name="bx_spline")

# %% interp1d_linear
t = (df.index - df.index[0]).total_seconds().to_numpy()
f = scipy.interpolate.interp1d(t, df["by"].to_numpy(), kind="linear", bounds_error=False)
result = pd.Series(f(t + 30.0), index=df.index, name="by_shifted")

# %% make_interp_spline_derivative
t = (df.index - df.index[0]).total_seconds().to_numpy()[::5]
spl = scipy.interpolate.make_interp_spline(t, df["bz"].to_numpy()[::5], k=3)
result = pd.Series(spl.derivative()(t), name="dbz_dt")

# %% pchip
t = (df.index - df.index[0]).total_seconds().to_numpy()
p = scipy.interpolate.PchipInterpolator(t[::20], df["bx"].to_numpy()[::20])
result = pd.Series(p(t), index=df.index, name="bx_pchip")

# %% univariate_spline_smoothing
t = (df.index - df.index[0]).total_seconds().to_numpy()
spl = scipy.interpolate.UnivariateSpline(t, df["bx"].to_numpy(), s=len(t) * 4.0)
result = pd.Series(spl(t), index=df.index, name="bx_smooth")

# %% spectrogram_interp_energy
result = sources["spec"].interp(energy=np.geomspace(20.0, 2e4, 16))

# %% interpolate_na_limit_area
gappy = df["bx"].where(df.index.minute % 17 != 0)
result = gappy.interpolate(limit_area="inside").to_frame("bx")
