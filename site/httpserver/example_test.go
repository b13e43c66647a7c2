package httpserver_test

import (
	"fmt"
	"net/http"

	"github.com/guidepub/guidepub/site/httpserver"
)

// A command starts from the defaults, changes what its flags say and
// serves with the server Server returns.
func ExampleLimits_Server() {
	l := httpserver.Default()
	l.MaxBodyBytes = 8 << 20 // dev: its webhook receiver takes ready events
	if err := l.Validate(); err != nil {
		panic(err)
	}
	hs := l.Server(http.NotFoundHandler())
	fmt.Println(hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	// Output: 10s 30s 1m0s 65536
}
