# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% cross_correlation_lag
x = df["bx"].to_numpy() - df["bx"].mean()
y = df["by"].to_numpy() - df["by"].mean()
cc = scipy.signal.correlate(x, y, mode="full") / (np.std(x) * np.std(y) * len(x))
lags = scipy.signal.correlation_lags(len(x), len(y))
result = pd.Series(cc, index=lags * 60, name="cc")

# %% lag_of_max_correlation
a = df["bx"].to_numpy() - df["bx"].mean()
b = df["bz"].to_numpy() - df["bz"].mean()
cc = np.correlate(a, b, mode="full")
result = int(np.argmax(cc) - (len(b) - 1))

# %% pearson_and_spearman
p = scipy.stats.pearsonr(df["bx"], df["by"])
s = scipy.stats.spearmanr(df["bx"], df["by"])
result = pd.Series({"pearson": p.statistic, "spearman": s.statistic})

# %% corr_matrix
result = df.corr()

# %% shifted_correlation_scan
result = pd.Series(
    {lag: df["bx"].corr(df["by"].shift(lag)) for lag in range(-30, 31, 5)}, name="corr"
)

# %% autocorrelation
x = df["bz"].to_numpy() - df["bz"].mean()
ac = np.correlate(x, x, mode="full")[len(x) - 1 :]
result = pd.Series(ac / ac[0], name="acf").iloc[:200].to_frame()

# %% fftconvolve_smoothing
kernel = scipy.signal.windows.gaussian(31, 5)
kernel = kernel / kernel.sum()
result = pd.Series(
    scipy.signal.fftconvolve(df["bx"].to_numpy(), kernel, mode="same"), index=df.index, name="bx"
)

# %% convolve_boxcar
result = pd.Series(
    np.convolve(df["by"].to_numpy(), np.ones(9) / 9, mode="same"), index=df.index, name="by"
)

# %% series_autocorr
result = pd.Series({lag: df["bx"].autocorr(lag) for lag in (1, 5, 10, 60)})
