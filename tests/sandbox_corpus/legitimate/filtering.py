# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821, E722

# %% butterworth_lowpass_filtfilt
b, a = scipy.signal.butter(4, 0.05)
result = df.apply(lambda c: scipy.signal.filtfilt(b, a, c.to_numpy()))

# %% butterworth_sos_bandpass
sos = scipy.signal.butter(4, [0.01, 0.1], btype="bandpass", output="sos")
filtered = scipy.signal.sosfiltfilt(sos, df["bx"].to_numpy())
result = pd.Series(filtered, index=df.index, name="bx_band")

# %% highpass_from_cutoff_in_hz
fs = 1 / 60.0
sos = scipy.signal.butter(3, 1 / 3600.0, btype="highpass", fs=fs, output="sos")
result = pd.DataFrame(
    {c: scipy.signal.sosfiltfilt(sos, df[c].to_numpy()) for c in df.columns}, index=df.index
)

# %% median_filter_despike
result = df.apply(lambda c: pd.Series(scipy.signal.medfilt(c.to_numpy(), 5), index=c.index))

# %% savgol_smoothing
result = pd.DataFrame(
    scipy.signal.savgol_filter(df.to_numpy(), 31, 3, axis=0), index=df.index, columns=df.columns
)

# %% gaussian_filter1d
result = df.apply(lambda c: scipy.ndimage.gaussian_filter1d(c.to_numpy(), sigma=5))

# %% uniform_filter_boxcar
smooth = scipy.ndimage.uniform_filter1d(df["bz"].to_numpy(), size=15)
result = pd.Series(smooth, index=df.index, name="bz_smooth")

# %% hampel_outlier_removal
med = df["bx"].rolling(11, center=True).median()
mad = (df["bx"] - med).abs().rolling(11, center=True).median()
outlier = (df["bx"] - med).abs() > 3 * 1.4826 * mad
result = df["bx"].mask(outlier, med).to_frame("bx_clean")

# %% sigma_clip_with_query_like_mask
clean = df[(df["bx"].abs() < 3 * df["bx"].std()) & (df["by"].abs() < 3 * df["by"].std())]
result = clean

# %% df_query
result = df.query("bx > 0 and by < 5")

# %% df_query_with_local_variable
threshold = df["bz"].median()
result = df.query("bz > @threshold")

# %% fir_filter_firwin
taps = scipy.signal.firwin(51, 0.1)
result = df.apply(lambda c: scipy.signal.filtfilt(taps, [1.0], c.to_numpy()))

# %% wiener_filter
result = pd.Series(scipy.signal.wiener(df["by"].to_numpy(), 7), index=df.index, name="by_w")

# %% bare_except_fallback
try:
    b, a = scipy.signal.butter(4, 0.05)
    out = scipy.signal.filtfilt(b, a, df["bx"].to_numpy())
except:
    out = df["bx"].to_numpy()
result = pd.Series(out, index=df.index, name="bx_f")
