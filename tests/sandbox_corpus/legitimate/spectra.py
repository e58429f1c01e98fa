# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% welch_psd
f, p = scipy.signal.welch(df["bx"].to_numpy(), fs=1 / 60.0, nperseg=256)
result = pd.DataFrame({"psd": p}, index=pd.Index(f, name="frequency_hz"))

# %% welch_trace_of_all_components
fs = 1 / 60.0
spectra = {c: scipy.signal.welch(df[c].to_numpy(), fs=fs, nperseg=512)[1] for c in df.columns}
freqs = scipy.signal.welch(df["bx"].to_numpy(), fs=fs, nperseg=512)[0]
result = pd.DataFrame(spectra, index=freqs).sum(axis=1).to_frame("trace_psd")

# %% fft_amplitude_spectrum
x = df["bz"].to_numpy() - df["bz"].mean()
amp = np.abs(np.fft.rfft(x)) / len(x)
freq = np.fft.rfftfreq(len(x), d=60.0)
result = pd.DataFrame({"freq": freq, "amplitude": amp})

# %% scipy_fft_with_hann_window
x = df["by"].to_numpy()
w = scipy.signal.windows.hann(len(x))
spec = scipy.fft.rfft((x - x.mean()) * w)
result = pd.Series(np.abs(spec) ** 2, index=scipy.fft.rfftfreq(len(x), 60.0), name="power")

# %% scipy_fftpack
x = df["bx"].to_numpy()
power = np.abs(scipy.fftpack.fft(x - x.mean())) ** 2
freq = scipy.fftpack.fftfreq(len(x), d=60.0)
result = pd.Series(power[freq > 0], index=freq[freq > 0], name="power")

# %% spectrogram_stft
f, t, sxx = scipy.signal.spectrogram(df["bx"].to_numpy(), fs=1 / 60.0, nperseg=128)
result = xr.DataArray(sxx, dims=("frequency", "time_s"), coords={"frequency": f, "time_s": t})

# %% periodogram_detrended
f, p = scipy.signal.periodogram(df["bz"].to_numpy(), fs=1 / 60.0, detrend="linear")
result = pd.Series(p, index=f, name="periodogram")

# %% lomb_scargle_with_gaps
t = (df.index - df.index[0]).total_seconds().to_numpy()
keep = np.arange(len(t)) % 7 != 0
freqs = np.linspace(1e-5, 5e-3, 200) * 2 * np.pi
power = scipy.signal.lombscargle(t[keep], df["bx"].to_numpy()[keep] - df["bx"].mean(), freqs)
result = pd.Series(power, index=freqs / (2 * np.pi), name="lomb_scargle")

# %% coherence_between_components
f, coh = scipy.signal.coherence(df["bx"].to_numpy(), df["by"].to_numpy(), fs=1 / 60.0, nperseg=256)
result = pd.DataFrame({"coherence": coh}, index=f)

# %% cross_spectral_density_phase
f, pxy = scipy.signal.csd(df["bx"].to_numpy(), df["bz"].to_numpy(), fs=1 / 60.0, nperseg=256)
result = pd.DataFrame({"magnitude": np.abs(pxy), "phase_deg": np.degrees(np.angle(pxy))}, index=f)

# %% spectral_index_fit
f, p = scipy.signal.welch(df["bx"].to_numpy(), fs=1 / 60.0, nperseg=512)
band = (f > 1e-4) & (f < 5e-3)
slope, intercept = np.polyfit(np.log10(f[band]), np.log10(p[band]), 1)
result = float(slope)

# %% errstate_log_power
f, p = scipy.signal.welch(df["by"].to_numpy(), fs=1 / 60.0, nperseg=256)
with np.errstate(divide="ignore"):
    db = 10 * np.log10(p)
result = pd.Series(db, index=f, name="psd_db")

# %% errstate_called_form
ratio = np.errstate(divide="ignore", invalid="ignore")(lambda: df["bx"] / df["by"])()
result = ratio.replace([np.inf, -np.inf], np.nan).to_frame("ratio")

# %% seterr_then_divide
np.seterr(divide="ignore", invalid="ignore")
ratio = df["bz"].to_numpy() / df["bx"].to_numpy()
result = pd.Series(ratio, index=df.index, name="bz_over_bx")
