# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% rolling_mean_std
r = df["bx"].rolling("30min")
result = pd.DataFrame({"mean": r.mean(), "std": r.std()})

# %% rolling_centered_median
result = df.rolling(15, center=True, min_periods=1).median()

# %% rolling_apply_lambda
result = df["bz"].rolling(30).apply(lambda w: np.percentile(w, 90), raw=True).to_frame("p90")

# %% ewm_smoothing
result = df.ewm(span=20).mean()

# %% rolling_variance_ratio
var = df.rolling("1h").var()
result = (var["bz"] / var.sum(axis=1)).to_frame("compressibility")

# %% rolling_correlation
result = df["bx"].rolling(60).corr(df["by"]).to_frame("corr")

# %% expanding_max
result = df.expanding().max()

# %% sliding_window_view_std
w = np.lib.stride_tricks.sliding_window_view(df["bx"].to_numpy(), 10)
result = pd.Series(w.std(axis=1), index=df.index[9:], name="bx_std10")

# %% rolling_quantile
result = df.rolling("2h").quantile(0.25)

# %% rolling_skew_kurt
result = pd.DataFrame({"skew": df["bx"].rolling(120).skew(), "kurt": df["bx"].rolling(120).kurt()})

# %% zscore_rolling
m = df.rolling(60).mean()
s = df.rolling(60).std()
result = (df - m) / s

# %% transform_demean_per_hour
result = df.groupby(df.index.floor("1h")).transform(lambda g: g - g.mean())
