module example.com/oldclosures

go 1.16
