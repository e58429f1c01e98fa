# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% wavedec_on_column
coeffs = pywt.wavedec(df["bx"], "db4", level=4)
result = pd.Series([float(np.sum(c**2)) for c in coeffs], name="energy_per_level")

# %% wavedec_denoise_soft_threshold
coeffs = pywt.wavedec(df["by"].to_numpy(), "sym8", level=5)
sigma = np.median(np.abs(coeffs[-1])) / 0.6745
thr = sigma * np.sqrt(2 * np.log(len(df)))
coeffs = [coeffs[0]] + [pywt.threshold(c, thr, mode="soft") for c in coeffs[1:]]
clean = pywt.waverec(coeffs, "sym8")[: len(df)]
result = pd.Series(clean, index=df.index, name="by_denoised")

# %% cwt_morlet_scalogram
scales = np.arange(1, 64)
coef, freqs = pywt.cwt(df["bz"].to_numpy()[:1024], scales, "morl", sampling_period=60.0)
result = xr.DataArray(np.abs(coef), dims=("frequency", "sample"), coords={"frequency": freqs})

# %% dwt_single_level
approx, detail = pywt.dwt(df["bx"], "haar")
result = pd.DataFrame({"approx": approx, "detail": detail})

# %% swt_stationary_wavelet
x = df["bx"].to_numpy()[:2048]
coeffs = pywt.swt(x, "db2", level=3)
result = pd.DataFrame({f"d{i}": d for i, (a, d) in enumerate(coeffs)})

# %% wavelet_packet_energy
wp = pywt.WaveletPacket(data=df["bz"].to_numpy()[:1024], wavelet="db1", maxlevel=3)
nodes = wp.get_level(3, order="freq")
result = pd.Series([float(np.sum(n.data**2)) for n in nodes], index=[n.path for n in nodes])

# %% wavelet_list_and_info
w = pywt.Wavelet("db4")
result = pd.Series({"length": w.dec_len, "orthogonal": float(w.orthogonal)})

# %% dwt_max_level
result = pywt.dwt_max_level(len(df), pywt.Wavelet("db4").dec_len)
