#!/usr/bin/python3
# The independent check of tfdebug's k-means background summary: sklearn's KMeans (Lloyd, started
# from the same k-means++ centres, run until no label changes) must reach the same centroids,
# labels and cluster sizes.
#
#   check_kmeans.py ROWS.csv INITIAL.csv RESULT.csv
#
# ROWS.csv: the data, one row a line; INITIAL.csv: the starting centres; RESULT.csv: tfdebug's
# centroids, one a line, each preceded by its weight; then a line of the rows' labels.
import sys

import numpy as np
from sklearn.cluster import KMeans

X = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2).astype(np.float64)
init = np.loadtxt(sys.argv[2], delimiter=",", ndmin=2)
lines = open(sys.argv[3]).read().strip().split("\n")
ours = np.array([[float(v) for v in line.split(",")] for line in lines[:-1]])
labels = np.array([int(v) for v in lines[-1].split(",")])
weights, centroids = ours[:, 0], ours[:, 1:]
km = KMeans(n_clusters=len(init), init=init, n_init=1, max_iter=300, tol=0.0, algorithm="lloyd").fit(X)
assert np.allclose(centroids, km.cluster_centers_, rtol=0, atol=1e-5), (centroids, km.cluster_centers_)
assert (labels == km.labels_).all(), (labels, km.labels_)
assert (weights == np.bincount(km.labels_, minlength=len(init))).all(), weights
assert weights.sum() == len(X)
print("sklearn agrees:", len(X), "rows,", len(init), "clusters,", km.n_iter_, "iterations")
