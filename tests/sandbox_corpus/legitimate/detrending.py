# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% detrend_linear
result = df.apply(lambda c: scipy.signal.detrend(c.to_numpy()))

# %% detrend_constant
result = pd.DataFrame(
    scipy.signal.detrend(df.to_numpy(), axis=0, type="constant"), index=df.index, columns=df.columns
)

# %% polyfit_trend_removal
t = (df.index - df.index[0]).total_seconds().to_numpy()
coef = np.polyfit(t, df["bx"].to_numpy(), 2)
result = (df["bx"] - np.polyval(coef, t)).to_frame("bx_detrended")

# %% running_mean_background
result = df - df.rolling("3h", center=True).mean()

# %% numpy_polynomial_fit
t = (df.index - df.index[0]).total_seconds().to_numpy() / 3600.0
p = np.polynomial.Polynomial.fit(t, df["bz"].to_numpy(), 3)
result = pd.Series(p(t), index=df.index, name="bz_trend")

# %% linregress_trend
t = (df.index - df.index[0]).total_seconds().to_numpy()
fit = scipy.stats.linregress(t, df["by"].to_numpy())
result = pd.Series({"slope_nT_per_s": fit.slope, "r": fit.rvalue, "p": fit.pvalue})

# %% curve_fit_exponential
x = np.linspace(0, 5, 200)
y = 3.0 * np.exp(-1.3 * x) + 0.05 * np.sin(x)
popt, pcov = scipy.optimize.curve_fit(lambda t, a, k: a * np.exp(-k * t), x, y, p0=[1.0, 1.0])
result = pd.Series(popt, index=["a", "k"])

# %% gradient_time_derivative
t = (df.index - df.index[0]).total_seconds().to_numpy()
result = pd.DataFrame({c: np.gradient(df[c].to_numpy(), t) for c in df.columns}, index=df.index)

# %% diff_per_second
result = df.diff().div(df.index.to_series().diff().dt.total_seconds(), axis=0)
