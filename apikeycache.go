package paykit

import (
	"sync"
	"time"
)

// apiKeyCache keeps the API keys this instance authenticated recently, so
// that a request reads its key from the Store at most once per TTL. A key
// revoked through this Service leaves the cache at once (with a generation
// count, so a lookup that raced the revocation cannot put it back); one
// revoked through another instance is refused here within the TTL. Misses
// are not kept: a key created anywhere works at once.
type apiKeyCache struct {
	ttl time.Duration // <= 0: nothing is kept

	mu   sync.Mutex
	gen  uint64 // bumped by every invalidation
	keys map[string]cachedAPIKey
}

type cachedAPIKey struct {
	key     APIKey
	expires time.Time
}

// apiKeyCacheMax bounds the cache; past it, expired entries are dropped
// and, if none were, new keys are not kept.
const apiKeyCacheMax = 10000

// get returns the cached key under publicKey at now, and the generation a
// later put must name.
func (c *apiKeyCache) get(publicKey string, now time.Time) (APIKey, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.keys[publicKey]
	if !ok || !now.Before(e.expires) {
		return APIKey{}, false, c.gen
	}
	return e.key, true, c.gen
}

// put keeps k, read from the Store at generation gen, unless something was
// invalidated since.
func (c *apiKeyCache) put(k *APIKey, gen uint64, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.keys == nil {
		c.keys = make(map[string]cachedAPIKey)
	}
	if len(c.keys) >= apiKeyCacheMax {
		for pk, e := range c.keys {
			if !now.Before(e.expires) {
				delete(c.keys, pk)
			}
		}
		if len(c.keys) >= apiKeyCacheMax {
			return
		}
	}
	c.keys[k.PublicKey] = cachedAPIKey{key: *k, expires: now.Add(c.ttl)}
}

// invalidate drops publicKey's entry and outdates lookups in flight.
func (c *apiKeyCache) invalidate(publicKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.keys, publicKey)
}
