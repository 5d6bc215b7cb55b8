#!/usr/bin/python3
# The independent check of a LIME surrogate: sklearn's Ridge(alpha=1) fitted to the same samples
# with the same weights must give tfdebug's coefficients, intercept and weighted R^2.
#
#   check_ridge.py NEIGHBOURHOOD.csv FIT.csv
#
# NEIGHBOURHOOD.csv: weight, output, features... (one sample a row, a header line); FIT.csv: one
# line: intercept, r2, coefficients...
import sys

import numpy as np
from sklearn.linear_model import Ridge

d = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
fit = np.loadtxt(sys.argv[2], delimiter=",")
weights, y, X = d[:, 0], d[:, 1], d[:, 2:]
r = Ridge(alpha=1.0).fit(X, y, sample_weight=weights)
assert np.allclose(fit[2:], r.coef_, rtol=1e-6, atol=1e-9), (fit[2:], r.coef_)
assert abs(fit[0] - r.intercept_) < 1e-6 * max(1, abs(r.intercept_)), (fit[0], r.intercept_)
assert abs(fit[1] - r.score(X, y, sample_weight=weights)) < 1e-7, (fit[1], r.score(X, y, sample_weight=weights))
print("sklearn agrees:", X.shape[0], "samples,", X.shape[1], "features")
