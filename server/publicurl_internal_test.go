package server

import (
	"net"
	"testing"
)

func TestBaseURLIsAnAddressClientsCanReach(t *testing.T) {
	v4 := &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 2222}
	v6 := &net.TCPAddr{IP: net.ParseIP("2001:db8::7"), Port: 2222}
	for _, tc := range []struct {
		public, http string
		via          net.Addr
		want         string
	}{
		{"https://raxol.example.com", "0.0.0.0:8080", v4, "https://raxol.example.com"},
		{"", "127.0.0.1:8080", v4, "http://127.0.0.1:8080"},
		{"", "[::1]:8080", nil, "http://[::1]:8080"},
		// A wildcard listener is no address: the client's own way in is.
		{"", "0.0.0.0:8080", v4, "http://203.0.113.7:8080"},
		{"", "[::]:8080", v6, "http://[2001:db8::7]:8080"},
		{"", ":8080", v4, "http://203.0.113.7:8080"},
		{"", "[::]:8080", nil, "http://localhost:8080"},
		{"", "0.0.0.0:8080", &net.TCPAddr{IP: net.IPv4zero}, "http://localhost:8080"},
	} {
		if got := baseURL(tc.public, tc.http, tc.via); got != tc.want {
			t.Errorf("baseURL(%q, %q, %v) = %q, want %q", tc.public, tc.http, tc.via, got, tc.want)
		}
	}
}
