module example.com/benchgate

go 1.26.8
