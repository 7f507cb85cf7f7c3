module example.com/costgate

go 1.26.8
