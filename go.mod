module github.com/kprof/kprof

go 1.26.8

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/arch v0.32.0
	golang.org/x/tools v0.52.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
