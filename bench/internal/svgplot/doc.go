// Package svgplot writes the report's plots as hand-made SVG: horizontal
// bar charts with one or more series per row, on a linear or logarithmic
// axis, with an optional reference line (1.0 for ratios) and min–max
// whiskers. It has no dependencies, so the benchmark module pulls in no
// plotting library; the output is checked to be well-formed XML.
package svgplot
