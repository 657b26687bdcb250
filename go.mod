module github.com/reliar/reliar

go 1.26.0

require github.com/google/uuid v1.6.0

require go.uber.org/goleak v1.3.0
