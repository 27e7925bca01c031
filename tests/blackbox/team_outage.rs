//! A team inbox while its database goes away and comes back: a clear 503, waits kept open,
//! nothing acknowledged lost.

use crate::pg::Postgres;
use crate::team::node;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn the_database_going_away_answers_503_keeps_waits_and_loses_nothing_acknowledged() {
    let pg = Postgres::dedicated();
    let url = pg.new_db();
    let a = node(&pg, &url, "alpha", "ana").await;
    let b = node(&pg, &url, "beta", "ben").await;
    let waiting_id = a.propose_tool("wait across the outage").await;
    let waiting = {
        let (http, url, tok, id) = (a.http.clone(), a.url.clone(), a.agent.clone(), waiting_id.clone());
        tokio::spawn(async move {
            http.get(format!("{url}/v1/proposals/{id}?wait=90"))
                .bearer_auth(tok)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    // Proposals keep coming while the database restarts; every acknowledged one must survive.
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let (http, url, tok, count) = (a.http.clone(), a.url.clone(), a.agent.clone(), count.clone());
        tokio::spawn(async move {
            let (mut acked, mut refused) = (Vec::new(), Vec::new());
            let end = Instant::now() + Duration::from_secs(6);
            while Instant::now() < end {
                let r = http
                    .post(format!("{url}/v1/proposals"))
                    .bearer_auth(&tok)
                    .json(&json!({"kind": "tool.call", "payload": {"tool": "t", "input": {"n": acked.len()}}}))
                    .send()
                    .await
                    .unwrap();
                let st = r.status().as_u16();
                let v: Value = r.json().await.unwrap_or(Value::Null);
                match st {
                    201 => {
                        acked.push(v["id"].as_str().unwrap().to_string());
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    _ => refused.push((st, v["error"]["code"].as_str().unwrap_or_default().to_string())),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (acked, refused)
        })
    };
    // Stopped once the writer has had some acknowledged.
    let start = Instant::now();
    while count.load(std::sync::atomic::Ordering::Relaxed) < 5 {
        assert!(start.elapsed() < Duration::from_secs(20), "nothing was acknowledged: {}", a.stderr());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pg.stop();
    // While it is away: a clear 503, nothing stored.
    let (st, v) = a.try_propose(json!({"kind": "tool.call", "payload": {"tool": "x"}})).await;
    assert_eq!((st.as_u16(), v["error"]["code"].as_str()), (503, Some("store_unavailable")), "{v}");
    // Long enough down for the writer to be refused too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    pg.restart();
    let (acked, refused) = writer.await.unwrap();
    assert!(!acked.is_empty());
    assert!(refused.iter().all(|(st, code)| *st == 503 && code == "store_unavailable"), "{refused:?}");
    // Back on its own, without a restart: B decides, A's wait (open through it all) wakes.
    let mut decided = false;
    for _ in 0..100 {
        let (st, _) = b.decide(&waiting_id, json!({"outcome": "approve"})).await;
        if st == 200 {
            decided = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(decided, "B never recovered: {}", b.stderr());
    let woke = tokio::time::timeout(Duration::from_secs(30), waiting).await.expect("the wait never woke").unwrap();
    assert_eq!(woke["status"], "approved", "{woke}");
    for id in &acked {
        let (st, p) = a.get(id, &a.agent).await;
        assert_eq!(st, 200, "acknowledged {id} was lost: {p}");
    }
    // A write whose answer was lost with the connection may be stored though refused; never the
    // other way round.
    let stored: usize = pg.psql(&url, "SELECT count(*) FROM proposals").parse().unwrap();
    assert!(stored > acked.len(), "{stored} stored, {} acknowledged", acked.len());
}
