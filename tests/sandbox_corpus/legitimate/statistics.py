# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% histogram_counts
counts, edges = np.histogram(df["bx"], bins=30)
result = pd.DataFrame({"count": counts}, index=0.5 * (edges[1:] + edges[:-1]))

# %% histogram2d
h, xe, ye = np.histogram2d(df["bx"], df["by"], bins=20)
result = xr.DataArray(
    h,
    dims=("bx_bin", "by_bin"),
    coords={"bx_bin": 0.5 * (xe[1:] + xe[:-1]), "by_bin": 0.5 * (ye[1:] + ye[:-1])},
)

# %% log_histogram_of_density
d = sources["plasma"]["density"]
bins = np.logspace(np.log10(d.min()), np.log10(d.max()), 20)
counts, edges = np.histogram(d, bins=bins, density=True)
result = pd.Series(counts, index=edges[:-1], name="pdf")

# %% pd_cut_binned_means
bins = pd.cut(sources["plasma"]["speed"], bins=[0, 350, 450, 550, 2000])
result = sources["plasma"].groupby(bins, observed=True)["density"].mean().to_frame()

# %% describe_frame
result = df.describe()

# %% agg_describe
result = df.agg("describe")

# %% quantiles_table
result = df.quantile([0.05, 0.25, 0.5, 0.75, 0.95])

# %% scipy_stats_describe
d = scipy.stats.describe(df["bz"].to_numpy())
result = pd.Series({"mean": d.mean, "variance": d.variance, "skewness": d.skewness})

# %% kde_density
kde = scipy.stats.gaussian_kde(df["bx"].to_numpy())
grid = np.linspace(df["bx"].min(), df["bx"].max(), 100)
result = pd.Series(kde(grid), index=grid, name="kde")

# %% ks_test_between_days
day1 = df["bx"][df.index.day == df.index[0].day]
day2 = df["bx"][df.index.day != df.index[0].day]
ks = scipy.stats.ks_2samp(day1, day2)
result = pd.Series({"statistic": ks.statistic, "pvalue": ks.pvalue})

# %% zscore_scipy
result = df.apply(scipy.stats.zscore)

# %% value_counts_of_sign
result = np.sign(df["bz"]).value_counts().to_frame("count")

# %% pdf_of_increments
inc = df["bx"].diff(5).dropna()
counts, edges = np.histogram(inc / inc.std(), bins=41, range=(-10, 10), density=True)
result = pd.Series(counts, index=0.5 * (edges[1:] + edges[:-1]), name="pdf")

# %% structure_function
lags = [1, 2, 4, 8, 16, 32]
result = pd.Series({lag: float((df["bx"].diff(lag) ** 2).mean()) for lag in lags}, name="sf2")

# %% binned_statistic
stat, edges, _ = scipy.stats.binned_statistic(
    sources["plasma"]["speed"], sources["plasma"]["temperature"], statistic="median", bins=10
)
result = pd.Series(stat, index=edges[:-1], name="median_T")
