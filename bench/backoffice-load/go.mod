module paykit-bench/backoffice-load

go 1.26.0
