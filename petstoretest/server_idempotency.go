package petstoretest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore"
)

// postKeyed sends POST /pets with p and an Idempotency-Key.
func (st *serverT) postKeyed(key string, p petstore.NewPet) *exchange {
	body := petBody(p)
	req := st.newRequest(http.MethodPost, st.url("/pets"), body)
	req.Header.Set("Idempotency-Key", key)
	x := st.do(req)
	x.sent = body
	return x
}

// newKey returns an idempotency key that no earlier run has used.
func newKey() string { return "petstoretest-" + rand.Text() }

func httpIdempotentReplay(st *serverT) {
	longest := newKey()
	longest += strings.Repeat("k", petstore.MaxIdempotencyKeyLength-len(longest))
	for _, key := range []string{newKey(), `"` + newKey() + `"`, longest} {
		p := petstore.NewPet{Name: st.name("Rex"), CategoryID: 1, Status: petstore.StatusAvailable}
		first := st.postKeyed(key, p)
		if !st.wantStatus(first, http.StatusCreated) {
			continue
		}
		created, ok := st.pet(st.clause, first)
		if !ok {
			continue
		}
		retry := st.postKeyed(key, p)
		if !st.wantStatus(retry, http.StatusCreated) {
			continue
		}
		replayed, ok := st.pet(st.clause, retry)
		if !ok {
			continue
		}
		st.diff(fmt.Sprintf("%s: the pet of the retry", retry), created, replayed)
		st.diff(fmt.Sprintf("%s: Location and Idempotent-Replayed of the first create and of its retry", retry),
			[]string{first.resp.Header.Get("Location"), "", first.resp.Header.Get("Location"), "true"},
			[]string{first.resp.Header.Get("Location"), first.resp.Header.Get("Idempotent-Replayed"),
				retry.resp.Header.Get("Location"), retry.resp.Header.Get("Idempotent-Replayed")})
		st.get(st.petURL(created.ID), created)
	}
}

func httpIdempotentReuse(st *serverT) {
	key := newKey()
	p := petstore.NewPet{Name: st.name("Rex"), CategoryID: 1}
	if x := st.postKeyed(key, p); !st.wantStatus(x, http.StatusCreated) {
		return
	}
	other := p
	other.CategoryID = 2
	st.wantError(st.postKeyed(key, other), http.StatusUnprocessableEntity, "idempotency_key_reused")
}
