//! Slack, Mattermost and Teams against a real HTTP recorder on loopback. Each request Plumb
//! makes is compared with the one notifications-engine's own Go service code makes for the same
//! notification to the same recorder (`tests/go-services`, `go run`), then checked field by
//! field against what the Go source says. Tokens and hook URLs stay out of errors.

mod common;

use std::collections::BTreeMap;

use common::{Received, Receiver};
use plumb_notifications::{
    Config, Destination, Engine, GoogleChatService, MattermostService, Notification,
    OpsgenieService, PagerDutyV2Service, SlackService, TeamsService, TelegramService,
};
use serde_json::{Value, json};

const TOKEN: &str = "xoxb-1234-s3cr3t";

/// Runs notifications-engine's service `kind` with `options` (YAML) on `notification`.
async fn go_send(kind: &str, options: &str, notification: &Value, recipients: &[&str]) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/go-services");
    let mut cmd = std::process::Command::new("go");
    cmd.args(["run", ".", kind, options, &notification.to_string()])
        .args(recipients)
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod");
    // The recorder runs on this test's runtime: wait for Go on another thread.
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("go (Go 1.24 or later) on PATH");
    assert!(
        out.status.success(),
        "go run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.trim().is_empty(), "notifications-engine: {stdout}");
}

/// A Rust notification from notifications-engine's JSON form (`message` and service sections).
fn notification(go: &Value) -> Notification {
    let mut n = Notification {
        message: go["message"].as_str().unwrap_or_default().to_string(),
        ..Notification::default()
    };
    for (k, v) in go.as_object().expect("object") {
        if k != "message" {
            n.services.insert(k.clone(), v.clone());
        }
    }
    n
}

fn dest(service: &str, recipient: &str) -> Destination {
    Destination {
        service: service.into(),
        recipient: recipient.into(),
    }
}

fn form(r: &Received) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(r.body.as_bytes())
        .into_owned()
        .collect()
}

fn header<'a>(r: &'a Received, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The Slack form with the JSON fields parsed (Go escapes `<>&` in JSON, serde does not).
fn slack_fields(r: &Received) -> BTreeMap<String, Value> {
    form(r)
        .into_iter()
        .map(|(k, v)| {
            let v = match k.as_str() {
                "attachments" | "blocks" => serde_json::from_str(&v).expect("json"),
                _ => Value::String(v),
            };
            (k, v)
        })
        .collect()
}

fn slack_notification() -> Value {
    json!({
        "message": "Application guestbook <synced> & healthy",
        "slack": {
            "username": "argocd",
            "icon": ":rocket:",
            "attachments": "[{\"title\": \"guestbook\", \"title_link\": \"https://argocd.example.com/applications/guestbook\", \"color\": \"#18be52\", \"fields\": [{\"title\": \"Sync Status\", \"value\": \"Synced\", \"short\": true}, {\"title\": \"Repository\", \"value\": \"https://github.com/o/r\"}]}]",
            "blocks": "[{\"type\": \"section\", \"text\": {\"type\": \"mrkdwn\", \"text\": \"*guestbook* synced\"}}]",
            "groupingKey": "guestbook-abc",
            "notifyBroadcast": true
        }
    })
}

#[tokio::test]
async fn slack_sends_what_notifications_engine_sends() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    for rx in [&go, &rs] {
        rx.reply(r#"{"ok": true, "channel": "C0123", "ts": "1700000000.000100"}"#);
    }
    let n = slack_notification();
    // Two messages to the same channel with one groupingKey: the second goes to the thread.
    go_send(
        "slack",
        &format!(
            "token: {TOKEN}\napiURL: {}/api/\ndisableUnfurl: true\n",
            go.url
        ),
        &n,
        &["deploys", "deploys"],
    )
    .await;
    let svc = SlackService::new(
        "slack",
        &json!({"token": TOKEN, "apiURL": format!("{}/api/", rs.url), "disableUnfurl": true}),
    )
    .expect("service");
    for _ in 0..2 {
        svc.send(&notification(&n), &dest("slack", "deploys"))
            .await
            .expect("send");
    }
    let (go, rs) = (go.received(), rs.received());
    assert_eq!(go.len(), 2);
    assert_eq!(rs.len(), 2);
    for (g, r) in go.iter().zip(&rs) {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/api/chat.postMessage")
        );
        assert_eq!(
            (g.method.as_str(), g.path.as_str()),
            ("POST", "/api/chat.postMessage")
        );
        assert_eq!(
            header(r, "content-type"),
            "application/x-www-form-urlencoded"
        );
        assert_eq!(header(g, "content-type"), header(r, "content-type"));
        assert_eq!(slack_fields(r), slack_fields(g));
    }
    // What the Go source says it sends, field by field.
    let first = slack_fields(&rs[0]);
    assert_eq!(first["token"], TOKEN);
    assert_eq!(first["channel"], "deploys");
    assert_eq!(first["text"], "Application guestbook <synced> & healthy");
    assert_eq!(first["username"], "argocd");
    assert_eq!(first["icon_emoji"], ":rocket:");
    assert_eq!(first["reply_broadcast"], "true");
    assert_eq!(first["unfurl_links"], "false");
    assert_eq!(first["unfurl_media"], "false");
    assert_eq!(first["attachments"][0]["fields"][1]["short"], false);
    assert_eq!(first["blocks"][0]["text"]["text"], "*guestbook* synced");
    assert!(!first.contains_key("thread_ts"));
    assert_eq!(slack_fields(&rs[1])["thread_ts"], "1700000000.000100");
}

#[tokio::test]
async fn slack_update_policy_edits_the_first_message() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    for rx in [&go, &rs] {
        rx.reply(r#"{"ok": true, "channel": "C0999", "ts": "1700000001.000200"}"#);
    }
    let mut n = slack_notification();
    n["slack"]["groupingKey"] = json!("update-test");
    n["slack"]["deliveryPolicy"] = json!("Update");
    n["slack"]["notifyBroadcast"] = json!(false);
    go_send(
        "slack",
        &format!("token: {TOKEN}\napiURL: {}/api/\n", go.url),
        &n,
        &["ops", "ops"],
    )
    .await;
    let svc = SlackService::new(
        "slack-update",
        &json!({"token": TOKEN, "apiURL": format!("{}/api/", rs.url)}),
    )
    .expect("service");
    for _ in 0..2 {
        svc.send(&notification(&n), &dest("slack-update", "ops"))
            .await
            .expect("send");
    }
    let (go, rs) = (go.received(), rs.received());
    let paths = |v: &[Received]| v.iter().map(|r| r.path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&rs), ["/api/chat.postMessage", "/api/chat.update"]);
    assert_eq!(paths(&go), paths(&rs));
    assert_eq!(slack_fields(&rs[1]), slack_fields(&go[1]));
    let update = slack_fields(&rs[1]);
    assert_eq!(update["channel"], "C0999");
    assert_eq!(update["ts"], "1700000001.000200");
    assert_eq!(update["as_user"], "true");
}

#[tokio::test]
async fn mattermost_sends_what_notifications_engine_sends() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    let n = json!({
        "message": "Application guestbook has been synced",
        "mattermost": {"attachments": "[{\"title\": \"guestbook\", \"color\": \"#18be52\", \"fields\": [{\"title\": \"Sync Status\", \"value\": \"Synced\", \"short\": true}]}]"}
    });
    go_send(
        "mattermost",
        &format!("apiURL: {}\ntoken: {TOKEN}\n", go.url),
        &n,
        &["chan-id-1"],
    )
    .await;
    let svc = MattermostService::new("mattermost", &json!({"apiURL": rs.url, "token": TOKEN}))
        .expect("service");
    svc.send(&notification(&n), &dest("mattermost", "chan-id-1"))
        .await
        .expect("send");
    let (g, r) = (&go.received()[0], &rs.received()[0]);
    for x in [g, r] {
        assert_eq!(
            (x.method.as_str(), x.path.as_str()),
            ("POST", "/api/v4/posts")
        );
        assert_eq!(header(x, "authorization"), format!("Bearer {TOKEN}"));
        assert_eq!(header(x, "content-type"), "application/json");
    }
    let body: Value = serde_json::from_str(&r.body).expect("json");
    assert_eq!(body, serde_json::from_str::<Value>(&g.body).expect("json"));
    assert_eq!(body["channel_id"], "chan-id-1");
    assert_eq!(body["message"], "Application guestbook has been synced");
    assert_eq!(
        body["props"]["attachments"][0]["fields"][0]["value"],
        "Synced"
    );
    // No attachments: an empty list, as Go's `[]any{}`.
    svc.send(
        &notification(&json!({"message": "m", "mattermost": {}})),
        &dest("mattermost", "c"),
    )
    .await
    .expect("send");
    let body: Value = serde_json::from_str(&rs.received()[1].body).expect("json");
    assert_eq!(body["props"], json!({"attachments": []}));
}

#[tokio::test]
async fn teams_sends_what_notifications_engine_sends() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    for rx in [&go, &rs] {
        rx.reply("1");
    }
    let n = json!({
        "message": "fallback text",
        "teams": {
            "title": "Synced guestbook",
            "text": "Application guestbook is now running new version",
            "themeColor": "#000080",
            "facts": "[{\"name\": \"Sync Status\", \"value\": \"Synced\"}, {\"name\": \"Repository\", \"value\": \"https://github.com/o/r\"}]",
            "sections": "[{\"activityTitle\": \"guestbook\"}]",
            "potentialAction": "[{\"@type\": \"OpenUri\", \"name\": \"Open\", \"targets\": [{\"os\": \"default\", \"uri\": \"https://argocd.example.com\"}]}]"
        }
    });
    go_send(
        "teams",
        &format!(
            "recipientUrls:\n  channel: {}/webhookb2/s3cr3t-path\n",
            go.url
        ),
        &n,
        &["channel"],
    )
    .await;
    let svc = TeamsService::new(
        "teams",
        &json!({"recipientUrls": {"channel": format!("{}/webhookb2/s3cr3t-path", rs.url)}}),
    )
    .expect("service");
    svc.send(&notification(&n), &dest("teams", "channel"))
        .await
        .expect("send");
    let (g, r) = (&go.received()[0], &rs.received()[0]);
    for x in [g, r] {
        assert_eq!(
            (x.method.as_str(), x.path.as_str()),
            ("POST", "/webhookb2/s3cr3t-path")
        );
        assert_eq!(header(x, "content-type"), "application/json");
    }
    let body: Value = serde_json::from_str(&r.body).expect("json");
    assert_eq!(body, serde_json::from_str::<Value>(&g.body).expect("json"));
    assert_eq!(body["@type"], "MessageCard");
    assert_eq!(body["context"], "https://schema.org/extensions");
    assert_eq!(body["summary"], "");
    assert_eq!(body["sections"][0]["activityTitle"], "guestbook");
    assert_eq!(body["sections"][1]["facts"][0]["name"], "Sync Status");
    assert_eq!(body["potentialAction"][0]["@type"], "OpenUri");
    // Only the message: Go's zero-valued title and summary are still sent.
    let plain = json!({"message": "just text"});
    svc.send(&notification(&plain), &dest("teams", "channel"))
        .await
        .expect("send");
    let body: Value = serde_json::from_str(&rs.received()[1].body).expect("json");
    assert_eq!(
        body,
        json!({"@type": "MessageCard", "context": "https://schema.org/extensions", "title": "", "summary": "", "text": "just text"})
    );
    // `teams.template` is sent as written.
    let raw = json!({"message": "m", "teams": {"template": "{\"type\": \"message\"}"}});
    svc.send(&notification(&raw), &dest("teams", "channel"))
        .await
        .expect("send");
    assert_eq!(rs.received()[2].body, "{\"type\": \"message\"}");
}

/// The body with each V2 card's random `cardId` replaced (Go's `uuid.New()`).
fn without_card_ids(body: &str) -> Value {
    let mut v: Value = serde_json::from_str(body).expect("json");
    if let Some(cards) = v.get_mut("cardsV2").and_then(Value::as_array_mut) {
        for c in cards {
            let id = c["cardId"].as_str().unwrap_or_default();
            assert_eq!(id.len(), 36, "{id}");
            c["cardId"] = json!("<uuid>");
        }
    }
    v
}

#[tokio::test]
async fn google_chat_sends_what_notifications_engine_sends() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    for rx in [&go, &rs] {
        rx.reply("{}");
    }
    let hook = |rx: &Receiver| format!("{}/v1/spaces/AAA/messages?key=k3y&token=s3cr3t", rx.url);
    let cards = json!({
        "message": "ignored when there are cards",
        "googlechat": {
            "cardsV2": "- header:\n    title: guestbook synced\n  sections:\n  - widgets:\n    - decoratedText:\n        topLabel: Revision\n        text: abc123\n",
            "threadKey": "guestbook"
        }
    });
    let text = json!({"message": "Application guestbook has been synced"});
    for n in [&cards, &text] {
        go_send(
            "googlechat",
            &format!("webhooks:\n  space: {}\n", hook(&go)),
            n,
            &["space"],
        )
        .await;
    }
    let svc = GoogleChatService::new("googlechat", &json!({"webhooks": {"space": hook(&rs)}}))
        .expect("service");
    for n in [&cards, &text] {
        svc.send(&notification(n), &dest("googlechat", "space"))
            .await
            .expect("send");
    }
    let (go, rs) = (go.received(), rs.received());
    assert_eq!((go.len(), rs.len()), (2, 2));
    for (g, r) in go.iter().zip(&rs) {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            (g.method.as_str(), g.path.as_str())
        );
        assert_eq!(header(r, "content-type"), header(g, "content-type"));
        assert_eq!(without_card_ids(&r.body), without_card_ids(&g.body));
    }
    assert_eq!(
        rs[0].path,
        "/v1/spaces/AAA/messages?key=k3y&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD&threadKey=guestbook&token=s3cr3t"
    );
    let body = without_card_ids(&rs[0].body);
    assert_eq!(body["text"], "");
    assert_eq!(
        body["cardsV2"][0]["card"]["header"]["title"],
        "guestbook synced"
    );
    assert_eq!(
        without_card_ids(&rs[1].body),
        json!({"text": "Application guestbook has been synced"})
    );
    assert_eq!(rs[1].path, "/v1/spaces/AAA/messages?key=k3y&token=s3cr3t");
    // Google's error object fails the delivery.
    let failing = Receiver::start().await;
    failing.reply(
        r#"{"error": {"code": 400, "message": "Invalid JSON", "status": "INVALID_ARGUMENT"}}"#,
    );
    let svc =
        GoogleChatService::new("gc", &json!({"webhooks": {"s": hook(&failing)}})).expect("service");
    let e = svc
        .send(&notification(&text), &dest("gc", "s"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "service gc: error with message: code=400 status=INVALID_ARGUMENT message=Invalid JSON"
    );
}

#[tokio::test]
async fn pagerduty_v2_sends_the_events_api_v2_body() {
    // go-pagerduty's endpoint is a constant, so notifications-engine cannot be pointed at the
    // recorder: the expected body is derived from `buildEvent` and go-pagerduty's `V2Event`.
    let rx = Receiver::start().await;
    rx.answer(&[202, 202, 400]);
    rx.reply(r#"{"status": "success"}"#);
    let url = format!("{}/v2/enqueue", rx.url);
    let svc = PagerDutyV2Service::new(
        "pagerdutyv2",
        &json!({"serviceKeys": {"my-service": "R0UT1NGK3Y"}, "apiURL": url}),
    )
    .expect("service");
    let full = json!({
        "message": "m",
        "pagerdutyv2": {"summary": "guestbook is Degraded", "severity": "critical", "source": "guestbook",
            "component": "api", "group": "prod", "class": "health", "url": "https://argocd/applications/guestbook",
            "dedupKey": "guestbook-degraded"}
    });
    let minimal =
        json!({"message": "m", "pagerdutyv2": {"summary": "s", "severity": "info", "source": "x"}});
    for n in [&full, &minimal] {
        svc.send(&notification(n), &dest("pagerdutyv2", "my-service"))
            .await
            .expect("send");
    }
    let got = rx.received();
    assert_eq!(
        (got[0].method.as_str(), got[0].path.as_str()),
        ("POST", "/v2/enqueue")
    );
    assert_eq!(header(&got[0], "content-type"), "application/json");
    assert_eq!(header(&got[0], "user-agent"), "go-pagerduty/1.8.0");
    let body: Value = serde_json::from_str(&got[0].body).expect("json");
    assert_eq!(
        body,
        json!({"routing_key": "R0UT1NGK3Y", "event_action": "trigger", "dedup_key": "guestbook-degraded",
            "client": "ArgoCD", "client_url": "https://argocd/applications/guestbook",
            "payload": {"summary": "guestbook is Degraded", "source": "guestbook", "severity": "critical",
                "component": "api", "group": "prod", "class": "health"}})
    );
    let body: Value = serde_json::from_str(&got[1].body).expect("json");
    assert_eq!(
        body,
        json!({"routing_key": "R0UT1NGK3Y", "event_action": "trigger", "client": "ArgoCD",
            "payload": {"summary": "s", "source": "x", "severity": "info"}})
    );
    // A refusal that echoes the routing key does not show it; no section, no recipient: named.
    rx.reply(r#"{"status": "invalid event", "message": "routing key R0UT1NGK3Y is invalid"}"#);
    let e = svc
        .send(&notification(&minimal), &dest("pagerdutyv2", "my-service"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("service pagerdutyv2: HTTP response with status code: 400"),
        "{e}"
    );
    assert!(!e.contains("R0UT1NGK3Y"), "{e}");
    let e = svc
        .send(
            &notification(&json!({"message": "m"})),
            &dest("pagerdutyv2", "my-service"),
        )
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(e, "service pagerdutyv2: no config found for pagerdutyv2");
    let e = svc
        .send(&notification(&minimal), &dest("pagerdutyv2", "other"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "service pagerdutyv2: no API key configured for recipient other"
    );
}

#[tokio::test]
async fn opsgenie_sends_what_notifications_engine_sends() {
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    for rx in [&go, &rs] {
        rx.reply(r#"{"result": "Request will be processed", "took": 0.1, "requestId": "r1"}"#);
        rx.answer(&[202, 202]);
    }
    let full = json!({
        "message": "guestbook is Degraded",
        "opsgenie": {"description": "Application guestbook health is Degraded", "priority": "P1",
            "alias": "guestbook-degraded", "note": "see Argo CD", "entity": "guestbook",
            "actions": ["Restart"], "tags": ["argocd", "prod"], "details": {"revision": "abc123"},
            "visibleTo": [{"type": "team", "name": "sre"}], "user": "argocd"}
    });
    let minimal = json!({"message": "plain alert"});
    let host = |rx: &Receiver| rx.url.trim_start_matches("http://").to_string();
    for n in [&full, &minimal] {
        go_send(
            "opsgenie",
            &format!("apiUrl: {}\napiKeys:\n  team-a: {TOKEN}\n", host(&go)),
            n,
            &["team-a"],
        )
        .await;
    }
    let svc = OpsgenieService::new(
        "opsgenie",
        &json!({"apiUrl": host(&rs), "apiKeys": {"team-a": TOKEN}}),
    )
    .expect("service");
    for n in [&full, &minimal] {
        svc.send(&notification(n), &dest("opsgenie", "team-a"))
            .await
            .expect("send");
    }
    let (go, rs) = (go.received(), rs.received());
    assert_eq!((go.len(), rs.len()), (2, 2));
    for (g, r) in go.iter().zip(&rs) {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v2/alerts"));
        assert_eq!((g.method.as_str(), g.path.as_str()), ("POST", "/v2/alerts"));
        for h in ["authorization", "content-type"] {
            assert_eq!(header(r, h), header(g, h), "{h}");
        }
        let body: Value = serde_json::from_str(&r.body).expect("json");
        assert_eq!(body, serde_json::from_str::<Value>(&g.body).expect("json"));
    }
    assert_eq!(header(&rs[0], "authorization"), format!("GenieKey {TOKEN}"));
    let body: Value = serde_json::from_str(&rs[0].body).expect("json");
    assert_eq!(
        body["responders"],
        json!([{"type": "team", "id": "team-a", "username": ""}])
    );
    assert_eq!(body["source"], "Argo CD");
    assert_eq!(body["priority"], "P1");
    assert_eq!(
        body["visibleTo"],
        json!([{"type": "team", "name": "sre", "username": ""}])
    );
    // A template section without a description is refused, as in Argo.
    let e = svc
        .send(
            &notification(&json!({"message": "m", "opsgenie": {"priority": "P2"}})),
            &dest("opsgenie", "team-a"),
        )
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "service opsgenie: opsgenie notification description is missing"
    );
    // A refusal names the status and Opsgenie's message, never the key.
    let failing = Receiver::start().await;
    failing.answer(&[422]);
    failing.reply(&format!(r#"{{"message": "key {TOKEN} is not valid"}}"#));
    let svc = OpsgenieService::new(
        "og",
        &json!({"apiUrl": host(&failing), "apiKeys": {"t": TOKEN}}),
    )
    .expect("service");
    let e = svc
        .send(&notification(&minimal), &dest("og", "t"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "service og: Error occurred with Status code: 422, Message: key <api key> is not valid"
    );
}

#[tokio::test]
async fn telegram_sends_what_the_bot_library_sends() {
    // notifications-engine calls tgbotapi.NewBotAPI, whose endpoint is a constant: the Go side
    // is its Send copied with NewBotAPIWithAPIEndpoint (tests/go-services, `telegram`), the
    // requests are the library's own.
    let (go, rs) = (Receiver::start().await, Receiver::start().await);
    let answer = r#"{"ok": true, "result": {"id": 1, "is_bot": true, "first_name": "b", "username": "b", "message_id": 1, "date": 0, "chat": {"id": 1, "type": "channel"}}}"#;
    for rx in [&go, &rs] {
        rx.reply(answer);
    }
    let token = "123456:s3cr3t-bot-token";
    let message = "Application *guestbook* synced & healthy";
    let recipients = ["-1001234|42", "deploys", "-1005"];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/go-services");
    let mut cmd = std::process::Command::new("go");
    cmd.args([
        "run",
        ".",
        "telegram",
        &format!("{}/bot%s/%s", go.url),
        token,
        message,
    ])
    .args(recipients)
    .current_dir(dir)
    .env("GOFLAGS", "-mod=mod");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("go on PATH");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let svc = TelegramService::new("telegram", &json!({"token": token, "apiURL": rs.url}))
        .expect("service");
    let n = notification(&json!({"message": message}));
    for r in recipients {
        svc.send(&n, &dest("telegram", r)).await.expect("send");
    }
    // Go makes one bot (one getMe) for all three; notifications-engine makes one per send.
    let go: Vec<Received> = go.received();
    let rs: Vec<Received> = rs.received();
    let sends = |v: &[Received]| -> Vec<(String, BTreeMap<String, String>)> {
        v.iter()
            .filter(|r| r.path.ends_with("/sendMessage"))
            .map(|r| (r.path.clone(), form(r)))
            .collect()
    };
    assert_eq!(sends(&rs), sends(&go));
    assert_eq!(rs.len(), 6);
    for (i, r) in rs.iter().enumerate() {
        let method = if i % 2 == 0 { "getMe" } else { "sendMessage" };
        assert_eq!(r.path, format!("/bot{token}/{method}"));
        assert_eq!(
            header(r, "content-type"),
            "application/x-www-form-urlencoded"
        );
    }
    let first = form(&rs[1]);
    assert_eq!(first["chat_id"], "-1001234");
    assert_eq!(first["message_thread_id"], "42");
    assert_eq!(first["parse_mode"], "Markdown");
    assert_eq!(first["text"], message);
    assert_eq!(form(&rs[3])["chat_id"], "@deploys");
    telegram_refusals(&n).await;
}

/// Telegram's refusal and a bad recipient are named; the token stays out.
async fn telegram_refusals(n: &Notification) {
    let rx = Receiver::start().await;
    rx.reply(r#"{"ok": false, "error_code": 401, "description": "Unauthorized"}"#);
    let svc = TelegramService::new("tg", &json!({"token": "9:s3cr3t", "apiURL": rx.url}))
        .expect("service");
    let e = svc
        .send(n, &dest("tg", "c"))
        .await
        .expect_err("refused")
        .to_string();
    assert_eq!(e, "service tg: telegram getMe: Unauthorized");
    let e = svc
        .send(n, &dest("tg", "-12|x"))
        .await
        .expect_err("refused")
        .to_string();
    assert_eq!(
        e,
        "service tg: recipient -12|x: thread id \"x\" is not a number"
    );
    let closed = TelegramService::new(
        "tg",
        &json!({"token": "9:s3cr3t", "apiURL": "http://127.0.0.1:9"}),
    )
    .expect("service");
    let e = closed
        .send(n, &dest("tg", "c"))
        .await
        .expect_err("refused")
        .to_string();
    assert!(!e.contains("s3cr3t"), "{e}");
}

#[tokio::test]
async fn errors_never_show_tokens_or_hook_urls() {
    let rx = Receiver::start().await;
    rx.answer(&[500, 500]);
    let n = notification(&slack_notification());
    let slack = SlackService::new(
        "slack",
        &json!({"token": TOKEN, "apiURL": format!("{}/api/", rx.url)}),
    )
    .expect("service");
    let e = slack
        .send(&n, &dest("slack", "c"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(e, "service slack: slack chat.postMessage: status 500");
    let mm =
        MattermostService::new("mm", &json!({"apiURL": rx.url, "token": TOKEN})).expect("service");
    let e = mm.send(&n, &dest("mm", "c")).await.unwrap_err().to_string();
    assert!(
        e.starts_with("service mm: request to 127.0.0.1 has failed with error code 500"),
        "{e}"
    );
    rx.reply(r#"{"ok": false, "error": "invalid_auth"}"#);
    let e = slack
        .send(&n, &dest("slack", "c"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(e, "service slack: slack chat.postMessage: invalid_auth");
    rx.reply("Webhook Bad Request");
    let teams = TeamsService::new(
        "teams",
        &json!({"recipientUrls": {"ch": format!("{}/webhookb2/{TOKEN}", rx.url)}}),
    )
    .expect("service");
    let e = teams
        .send(&n, &dest("teams", "ch"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("Webhook Bad Request"), "{e}");
    let e2 = teams
        .send(&n, &dest("teams", "nope"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e2,
        "service teams: no teams webhook configured for recipient nope"
    );
    // A refused connection: the error names no URL.
    let closed = TeamsService::new(
        "teams",
        &json!({"recipientUrls": {"ch": format!("http://127.0.0.1:9/hook/{TOKEN}")}}),
    )
    .expect("service");
    let e3 = closed
        .send(&n, &dest("teams", "ch"))
        .await
        .unwrap_err()
        .to_string();
    for e in [e, e2, e3] {
        assert!(!e.contains("s3cr3t"), "{e}");
    }
    // Bad JSON in a template field is named.
    let bad = notification(&json!({"message": "m", "slack": {"attachments": "[{"}}));
    let e = slack
        .send(&bad, &dest("slack", "c"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("service slack: failed to unmarshal attachments:"),
        "{e}"
    );
}

#[test]
fn configured_through_the_configmap_and_unknown_types_refused() {
    let cm = BTreeMap::from([
        (
            "service.slack".to_string(),
            "token: $slack-token\n".to_string(),
        ),
        (
            "service.teams".to_string(),
            "recipientUrls:\n  a: https://h/x\n".to_string(),
        ),
        (
            "service.mattermost".to_string(),
            "apiURL: https://mm\ntoken: $slack-token\n".to_string(),
        ),
        (
            "service.email".to_string(),
            "host: smtp.example.com\n".to_string(),
        ),
        (
            "service.mattermost.bad".to_string(),
            "apiURL: not a url\n".to_string(),
        ),
    ]);
    let secret = BTreeMap::from([("slack-token".to_string(), TOKEN.as_bytes().to_vec())]);
    let (cfg, errors) = Config::parse(&cm, &secret);
    assert!(errors.is_empty(), "{errors:?}");
    let engine = Engine::new(cfg, Vec::new());
    let errors: Vec<String> = engine.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "service bad: apiURL: not an absolute URL",
            "service email: type email is not implemented in Plumb yet (googlechat, mattermost, opsgenie, pagerdutyv2, slack, teams, telegram, webhook are)",
        ]
    );
}
