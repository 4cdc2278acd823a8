// Sends notifications with notifications-engine's own service code (pkg/services), so the Rust
// test can compare the requests it makes with Plumb's on the same loopback recorder.
// Usage: go run . <service type> <options YAML> <notification JSON> <recipient>...
package main


import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/argoproj/notifications-engine/pkg/services"
)

func main() {
	svc, err := services.NewService(os.Args[1], []byte(os.Args[2]))
	if err != nil {
		panic(err)
	}
	var n services.Notification
	if err := json.Unmarshal([]byte(os.Args[3]), &n); err != nil {
		panic(err)
	}
	for _, r := range os.Args[4:] {
		if err := svc.Send(n, services.Destination{Service: os.Args[1], Recipient: r}); err != nil {
			fmt.Println("error:", err)
		}
	}
}
