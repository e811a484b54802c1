module github.com/simdedge/simdedge/asm/_gen

go 1.26

require github.com/mmcloughlin/avo v0.5.0 // indirect
