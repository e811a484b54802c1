module github.com/simdedge/simdedge/parse/url/_gen

go 1.26.0

require (
	golang.org/x/net v0.62.0
	golang.org/x/text v0.43.0
)
