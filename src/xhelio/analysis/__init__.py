"""Standard space-physics analysis methods as pure, typed functions.

One module per family: `variance` (minimum/maximum variance), `shock` (shock normals,
θBn, shock speed, Rankine-Hugoniot), `frames` (de Hoffmann-Teller frame, Walén test),
`timing` (multi-spacecraft timing, cross-correlation lag), `formulas` (every derived
quantity's expression over SI inputs and CODATA constants, shared with the offline
sandbox code), `plasma` (plasma quantities with units by astropy.units, the optional
`analysis` extra), `spectra` (Welch PSD,
spectral index, dynamic spectrum, wavelet power) and `pitch` (pitch-angle
distributions). Every result is a `report.AnalysisResult`: the numbers with their
uncertainty, the method, its reference, what was assumed and which preconditions were
checked (cadence, gaps, units, frame). Imports numpy, scipy, pandas, pywt, pydantic and
`xhelio.errors` only, so the tools, the sandbox and exported scripts share them.
"""
