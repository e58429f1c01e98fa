# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% resample_hourly_mean
result = df.resample("1h").mean()

# %% resample_multiple_aggregations
result = df["bx"].resample("30min").agg(["mean", "std", "min", "max"])

# %% grouper_describe
result = df["bz"].groupby(pd.Grouper(freq="6h")).describe()

# %% resample_count_coverage
counts = df["bx"].resample("1h").count()
result = (counts / 60.0).to_frame("coverage")

# %% downsample_plasma_to_5min_median
result = sources["plasma"].resample("5min").median()

# %% upsample_and_interpolate
result = sources["plasma"].resample("30s").mean().interpolate(method="time")

# %% resample_ohlc
result = df["bx"].resample("1h").ohlc()

# %% decimate_signal
x = scipy.signal.decimate(df["bx"].to_numpy(), 10)
result = pd.Series(x, index=df.index[::10][: len(x)], name="bx_dec")

# %% scipy_resample_poly
x = scipy.signal.resample_poly(df["by"].to_numpy(), up=1, down=4)
result = pd.Series(x, index=df.index[::4][: len(x)], name="by_resampled")

# %% groupby_hour_of_day
result = df.groupby(df.index.hour).mean()

# %% groupby_agg_describe
result = df.groupby(df.index.floor("12h"))["bx"].agg("describe")

# %% asfreq_fill_gaps
result = sources["plasma"].asfreq("64s").ffill(limit=3)

# %% rolling_resample_combo
result = df.rolling("1h").mean().resample("1h").last()
