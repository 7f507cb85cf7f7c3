package agent

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// ServeLive listens on addr (HOST:PORT, HOST an IPv4 address, [IPv6],
// localhost or empty for all addresses) and serves l's requests (Respond)
// over HTTP/1.1 until the program ends, one connection and one request at
// a time per goroutine, with counting suspended on all of them. It returns
// once listening, or the error that prevented it.
//
// The server is written on system calls: net and net/http are not linked
// into the programs kprof builds (see Live).
func ServeLive(addr string, l *Live) error {
	fd, err := listen(addr)
	if err != nil {
		return err
	}
	go Suspend(func() {
		for {
			c, _, err := syscall.Accept4(fd, syscall.SOCK_CLOEXEC)
			if err != nil {
				if err == syscall.EINTR || err == syscall.ECONNABORTED || err == syscall.EMFILE || err == syscall.ENFILE {
					continue
				}
				return
			}
			go Suspend(func() { serveConn(c, l) })
		}
	})
	return nil
}

// listen returns a listening TCP socket on addr.
func listen(addr string) (int, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return -1, errors.New("want HOST:PORT")
	}
	host, ps := addr[:i], addr[i+1:]
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return -1, fmt.Errorf("port %q: want 0 to 65535", ps)
	}
	var sa syscall.Sockaddr
	family := syscall.AF_INET
	switch {
	case host == "" || host == "0.0.0.0":
		sa = &syscall.SockaddrInet4{Port: int(port)}
	case host == "localhost":
		sa = &syscall.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}
	case strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]"):
		ip, ok := parseIPv6(host[1 : len(host)-1])
		if !ok {
			return -1, fmt.Errorf("host %q: want an IPv6 address in brackets", host)
		}
		sa, family = &syscall.SockaddrInet6{Port: int(port), Addr: ip}, syscall.AF_INET6
	default:
		ip, ok := parseIPv4(host)
		if !ok {
			return -1, fmt.Errorf("host %q: want an IPv4 address, [IPv6 address], localhost or nothing", host)
		}
		sa = &syscall.SockaddrInet4{Port: int(port), Addr: ip}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %v", err)
	}
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("listen tcp %s: bind: %v", addr, err)
	}
	if err := syscall.Listen(fd, 64); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("listen tcp %s: %v", addr, err)
	}
	return fd, nil
}

func parseIPv4(s string) (ip [4]byte, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return ip, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return ip, false
		}
		ip[i] = byte(n)
	}
	return ip, true
}

// parseIPv6 parses the forms of an IPv6 address without an embedded IPv4
// part: groups of up to four hex digits, at most one "::".
func parseIPv6(s string) (ip [16]byte, ok bool) {
	group := func(s string) (out []uint16, ok bool) {
		if s == "" {
			return nil, true
		}
		for _, g := range strings.Split(s, ":") {
			n, err := strconv.ParseUint(g, 16, 16)
			if err != nil || len(g) > 4 {
				return nil, false
			}
			out = append(out, uint16(n))
		}
		return out, true
	}
	var hi, lo []uint16
	if a, b, cut := strings.Cut(s, "::"); cut {
		var ok1, ok2 bool
		hi, ok1 = group(a)
		lo, ok2 = group(b)
		if !ok1 || !ok2 || len(hi)+len(lo) > 7 {
			return ip, false
		}
	} else {
		hi, ok = group(s)
		if !ok || len(hi) != 8 {
			return ip, false
		}
	}
	for i, g := range hi {
		ip[2*i], ip[2*i+1] = byte(g>>8), byte(g)
	}
	for i, g := range lo {
		j := 8 - len(lo) + i
		ip[2*j], ip[2*j+1] = byte(g>>8), byte(g)
	}
	return ip, true
}

// serveConn reads one request from connection c, answers it and closes c.
func serveConn(c int, l *Live) {
	defer syscall.Close(c)
	// A read that waits longer than this ends the connection.
	tv := syscall.Timeval{Sec: 10}
	syscall.SetsockoptTimeval(c, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	var req []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(req, []byte("\r\n\r\n")) && !bytes.Contains(req, []byte("\n\n")) {
		n, err := syscall.Read(c, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		req = append(req, buf[:n]...)
		if len(req) > 64<<10 {
			reply(c, 431, textType, []byte("request header too large\n"), false)
			return
		}
	}
	line, _, _ := bytes.Cut(req, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/1.") {
		reply(c, 400, textType, []byte("bad request\n"), false)
		return
	}
	if f[0] != "GET" && f[0] != "HEAD" {
		reply(c, 405, textType, []byte("only GET\n"), false)
		return
	}
	path, query, _ := strings.Cut(f[1], "?")
	status, ctype, body := l.respond(path, query)
	reply(c, status, ctype, body, f[0] == "HEAD")
}

// reply writes an HTTP/1.1 response that closes the connection.
func reply(c, status int, ctype string, body []byte, head bool) {
	text := map[int]string{200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 431: "Request Header Fields Too Large", 500: "Internal Server Error"}[status]
	out := fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", status, text, ctype, len(body))
	if !head {
		out = append(out, body...)
	}
	for len(out) > 0 {
		n, err := syscall.Write(c, out)
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		out = out[n:]
	}
}
