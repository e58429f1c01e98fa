"""Ephemeris and geometry: where bodies and spacecraft are, in which frame, and how they relate.

`bodies` names what can be located (NAIF ids, kernels, archive position datasets);
`kernels` fetches, checks, caches and loads SPICE kernels; `spice` evaluates them;
`archive` reads the position datasets the archives serve when no kernel covers a request;
`frames` rotates vectors between J2000, HCI, HEE, HAE, HEEQ, GSE, GSM, RTN and body-fixed
frames; `locate` answers "where was X" from either; `geometry` computes separations,
alignments and Parker-spiral connectivity; `figure` draws the configuration. Imports
`sources` (the HTTP client, the data source protocol), `errors`, `config` and `timerange`.
"""
