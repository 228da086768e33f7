package httpadapter

import (
	_ "embed"
	"net/http"
	"slices"
)

//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the OpenAPI 3.1 document (JSON) of the merchant
// and operator APIs, with the paths examples/server mounts them at.
func OpenAPIDocument() []byte { return slices.Clone(openAPIDocument) }

func serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	writeBody(w, http.StatusOK, openAPIDocument)
	return nil
}
