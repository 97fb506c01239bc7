package testkit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// RawHTTP writes one HTTP/1.1 request by hand on a new connection to addr,
// as a client no library would let a test be: head is the request line
// and headers, without the blank line (one per line, "\r\n" between),
// then body goes out in pieces, gap apart (a trickle, a body that never
// comes). It returns the answer's status, 0 if none came within 20 s, and
// how long it took from the head.
func RawHTTP(t testing.TB, addr string, head []string, body []string, gap time.Duration) (int, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := fmt.Fprintf(conn, "%s\r\n\r\n", strings.Join(head, "\r\n")); err != nil {
		t.Fatal(err)
	}
	go func() { // ends with the connection, when RawHTTP returns
		for _, p := range body {
			time.Sleep(gap)
			if _, err := conn.Write([]byte(p)); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}
