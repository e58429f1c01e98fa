# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% minimum_variance_analysis
b = df.to_numpy()
m = np.cov(b, rowvar=False)
vals, vecs = np.linalg.eigh(m)
result = pd.DataFrame(vecs, index=["x", "y", "z"], columns=["min", "int", "max"])

# %% mva_eigenvalue_ratios
vals, vecs = np.linalg.eigh(np.cov(df.to_numpy().T))
result = pd.Series({"int_over_min": vals[1] / vals[0], "max_over_int": vals[2] / vals[1]})

# %% mva_rotated_field
vals, vecs = np.linalg.eigh(np.cov(df.to_numpy().T))
result = pd.DataFrame(df.to_numpy() @ vecs[:, ::-1], index=df.index, columns=["bl", "bm", "bn"])


# %% mva_by_interval
def mva_normal(block):
    vecs = np.linalg.eigh(np.cov(block.to_numpy().T))[1]
    return pd.Series(vecs[:, 0], index=["nx", "ny", "nz"])


result = df.groupby(df.index.floor("6h")).apply(mva_normal)

# %% svd_principal_axes
u, s, vt = np.linalg.svd(df.to_numpy() - df.to_numpy().mean(axis=0), full_matrices=False)
result = pd.DataFrame(vt, columns=df.columns)

# %% pca_explained_variance
x = df.to_numpy() - df.mean().to_numpy()
s = np.linalg.svd(x, compute_uv=False)
result = pd.Series(s**2 / np.sum(s**2), name="explained")
