// Sends notifications with notifications-engine's own service code (pkg/services), so the Rust
// test can compare the requests it makes with Plumb's on the same loopback recorder.
// Usage: go run . <service type> <options YAML> <notification JSON> <recipient>...
package main


import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	tgbotapi "github.com/OvyFlash/telegram-bot-api"

	"github.com/argoproj/notifications-engine/pkg/services"
)

func main() {
	if os.Args[1] == "telegram" {
		telegram()
		return
	}
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

// telegram is notifications-engine's telegramService.Send and buildTelegramMessageOptions
// (pkg/services/telegram.go), copied because it calls tgbotapi.NewBotAPI, whose endpoint is a
// constant; NewBotAPIWithAPIEndpoint is the only change. The request itself is the library's.
// Usage: go run . telegram <endpoint "http://host/bot%s/%s"> <token> <message> <recipient>...
func telegram() {
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint(os.Args[3], os.Args[2])
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, recipient := range os.Args[5:] {
		var msg tgbotapi.MessageConfig
		if strings.HasPrefix(recipient, "-") {
			chatChannel := strings.Split(recipient, "|")
			chatID, err := strconv.ParseInt(chatChannel[0], 10, 64)
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			msg = tgbotapi.NewMessage(chatID, os.Args[4])
			msg.ParseMode = "Markdown"
			if len(chatChannel) > 1 {
				threadID, err := strconv.Atoi(chatChannel[1])
				if err != nil {
					fmt.Println("error:", err)
					continue
				}
				msg.MessageThreadID = threadID
			}
		} else {
			msg = tgbotapi.NewMessageToChannel("@"+recipient, os.Args[4])
			msg.ParseMode = "Markdown"
		}
		if _, err := bot.Send(msg); err != nil {
			fmt.Println("error:", err)
		}
	}
}
