module github.com/reliar/reliar/observability/otel

go 1.26.0

require github.com/reliar/reliar v0.0.0

replace github.com/reliar/reliar => ../..
