module example.com/genericmethods

go 1.27
