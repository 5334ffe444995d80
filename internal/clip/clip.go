// Package clip cuts a value that a client sent to a length fit for a log
// line or an error message, so that a hostile client cannot make either as
// long as its request.
package clip

import (
	"strconv"
	"unicode/utf8"
)

// Max is the most bytes of a value that String keeps.
const Max = 64

// String returns s when it is at most Max bytes long. Otherwise it returns
// the first Max bytes of s (fewer when the cut would split a UTF-8
// sequence), a marker and the length of s, as in "GETGET…[4000 bytes]",
// so that a reader sees that the value was cut and how long it was. It
// allocates only when it cuts.
func String(s string) string {
	if len(s) <= Max {
		return s
	}
	cut := Max
	for cut > Max-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[" + strconv.Itoa(len(s)) + " bytes]"
}
