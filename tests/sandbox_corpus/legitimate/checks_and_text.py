# Sandbox snippets: df, sources, pd, np, xr, scipy and pywt are provided (see ../README.md).
# ruff: noqa: F821

# %% api_types_numeric_check
numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
result = df[numeric]

# %% api_types_datetime_check
result = bool(pd.api.types.is_datetime64_any_dtype(df.index))

# %% format_template_variable
template = "{:.2f} nT"
result = template.format(df["bx"].mean())

# %% format_template_named_fields
template = "mean={mean:.3f} std={std:.3f}"
result = template.format(mean=df["bx"].mean(), std=df["bx"].std())

# %% fstring_summary
result = f"max |B| = {np.sqrt((df**2).sum(axis=1)).max():.1f} nT"

# %% print_and_return
print(df.describe())
print(df.head())
result = len(df)

# %% isinstance_checks
result = sum(1 for c in df.columns if isinstance(df[c].iloc[0], (float, np.floating)))

# %% dtype_kind_select
result = df.select_dtypes(include="number").columns.size

# %% try_except_valueerror
try:
    value = float("not a number")
except ValueError:
    value = np.nan
result = value

# %% while_loop_iteration
n = 0
total = 0.0
while n < 10:
    total += float(df["bx"].iloc[n])
    n += 1
result = total

# %% dict_of_results_to_frame
stats = {}
for name in df.columns:
    stats[name] = {"mean": df[name].mean(), "rms": np.sqrt((df[name] ** 2).mean())}
result = pd.DataFrame(stats).T

# %% time_column_to_frame
out = df.resample("1h").mean().reset_index()
out = out.rename(columns={"index": "time"})
out["time"] = out["time"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
result = out
