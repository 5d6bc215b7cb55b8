#!/usr/bin/python3
"""Prints, as JSON, what openpyxl (an independent reader) sees of a workbook's charts and marked
cells: per sheet, each chart's title, value-axis log base and title, how blanks show, and its
series (name and values reference); and every commented cell with its value, comment and fill.
Usage: read_xlsx_charts.py BOOK.xlsx"""
import json
import sys

import openpyxl


def text_of(title):
    """The plain text of a chart or axis title (rich text runs joined), or None."""
    if title is None or title.tx is None or title.tx.rich is None:
        return None
    return "".join(run.t for p in title.tx.rich.p for run in (p.r or []))


def series_name(series):
    """A series' name: a cell reference, or the literal text."""
    if series.tx is None:
        return None
    return series.tx.strRef.f if series.tx.strRef is not None else series.tx.v


def main():
    book = openpyxl.load_workbook(sys.argv[1])
    out = {}
    for ws in book.worksheets:
        charts = []
        for chart in ws._charts:
            scaling = chart.y_axis.scaling
            charts.append({
                "title": text_of(chart.title),
                "y_log_base": scaling.logBase if scaling is not None else None,
                "y_title": text_of(chart.y_axis.title),
                "blanks": chart.display_blanks,
                "series": [{"name": series_name(s), "values": s.val.numRef.f} for s in chart.series],
            })
        marked = []
        for row in ws.iter_rows():
            for cell in row:
                if cell.comment is not None:
                    marked.append({"cell": cell.coordinate, "value": cell.value,
                                   "comment": cell.comment.text, "fill": cell.fill.fgColor.rgb})
        out[ws.title] = {"charts": charts, "marked": marked}
    json.dump(out, sys.stdout, indent=1)


main()
