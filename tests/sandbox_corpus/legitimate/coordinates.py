# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% field_magnitude
result = np.sqrt((df**2).sum(axis=1)).to_frame("bmag")

# %% clock_and_cone_angles
clock = np.degrees(np.arctan2(df["by"], df["bz"]))
cone = np.degrees(np.arccos(df["bx"] / np.sqrt((df**2).sum(axis=1))))
result = pd.DataFrame({"clock": clock, "cone": cone})

# %% rotation_matrix_about_z
theta = np.radians(30.0)
rot = np.array([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]])
result = pd.DataFrame(df.to_numpy() @ rot.T, index=df.index, columns=["b1", "b2", "b3"])

# %% scipy_rotation_from_euler
r = scipy.spatial.transform.Rotation.from_euler("zyx", [10, 20, 5], degrees=True)
result = pd.DataFrame(r.apply(df.to_numpy()), index=df.index, columns=df.columns)

# %% field_aligned_coordinates
mean_b = df.rolling("1h", center=True).mean()
e_par = mean_b.div(np.sqrt((mean_b**2).sum(axis=1)), axis=0)
db = df - mean_b
par = (db * e_par).sum(axis=1)
result = pd.DataFrame({"db_par": par, "db_perp": np.sqrt((db**2).sum(axis=1) - par**2)})

# %% spherical_angles
r = np.sqrt((df**2).sum(axis=1))
result = pd.DataFrame(
    {
        "r": r,
        "lat": np.degrees(np.arcsin(df["bz"] / r)),
        "lon": np.degrees(np.arctan2(df["by"], df["bx"])) % 360,
    }
)

# %% rtn_like_projection
x_hat = np.array([1.0, 0.0, 0.0])
n_hat = np.array([0.0, 0.0, 1.0])
t_hat = np.cross(n_hat, x_hat)
m = np.vstack([x_hat, t_hat, n_hat])
result = pd.DataFrame(df.to_numpy() @ m.T, index=df.index, columns=["br", "bt", "bn"])

# %% einsum_batch_rotation
angles = np.linspace(0, np.pi, len(df))
c, s = np.cos(angles), np.sin(angles)
mats = np.stack(
    [
        np.stack([c, -s, 0 * c], 1),
        np.stack([s, c, 0 * c], 1),
        np.stack([0 * c, 0 * c, 1 + 0 * c], 1),
    ],
    1,
)
result = pd.DataFrame(
    np.einsum("nij,nj->ni", mats, df.to_numpy()), index=df.index, columns=list("xyz")
)
