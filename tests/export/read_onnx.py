#!/usr/bin/python3
"""Checks an ONNX model with python3-onnx (onnx.checker.check_model, full) and prints, as JSON,
its graph inputs and its initializers with their values (onnx.numpy_helper.to_array).
Usage: read_onnx.py MODEL.onnx"""
import json
import sys

import onnx
from onnx import numpy_helper


def main():
    model = onnx.load(sys.argv[1])
    onnx.checker.check_model(model, full_check=True)
    out = {
        "inputs": [i.name for i in model.graph.input],
        "initializers": [{"name": t.name, "data_type": t.data_type, "dims": list(t.dims),
                          "values": numpy_helper.to_array(t).astype("float64").ravel().tolist()}
                         for t in model.graph.initializer],
    }
    json.dump(out, sys.stdout)


main()
