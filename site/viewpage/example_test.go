package viewpage_test

import (
	"fmt"

	"github.com/guidepub/guidepub/site/viewpage"
)

// The headers a server sends with each kind of page, here for pages whose
// media come from https://view.example.com.
func ExampleCSP() {
	for _, k := range viewpage.Kinds {
		fmt.Printf("%s\n  Content-Security-Policy: %s\n  X-Frame-Options: %q\n", k, viewpage.CSP(k, "https://view.example.com"), viewpage.FrameOptions(k))
	}
	// Output:
	// branded
	//   Content-Security-Policy: default-src 'none'; img-src 'self' https://view.example.com data:; style-src 'self'; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'
	//   X-Frame-Options: "DENY"
	// unbranded
	//   Content-Security-Policy: default-src 'none'; img-src 'self' https://view.example.com data:; style-src 'self'; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *
	//   X-Frame-Options: ""
	// embedded
	//   Content-Security-Policy: default-src 'none'; img-src 'self' https://view.example.com data:; style-src 'self'; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *
	//   X-Frame-Options: ""
}
