module example.com/customagent

go 1.26.8

require github.com/kprof/kprof v0.0.0

replace github.com/kprof/kprof => ../..
