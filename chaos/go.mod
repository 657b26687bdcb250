module github.com/reliar/reliar/chaos

go 1.26.0

require github.com/reliar/reliar v0.0.0

replace github.com/reliar/reliar => ..
