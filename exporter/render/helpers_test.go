package render

import "time"

// testNow is the fixed time of the tests: after the fixtures' 2020 expiry,
// before their 2099 one.
var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
