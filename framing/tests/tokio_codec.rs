//! The `tokio_util::codec` implementations (feature `tokio`, on for this crate's tests)
//! driven through `FramedRead` / `FramedWrite` / `Framed` over in-memory pipes.

#![cfg(feature = "tokio")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::{Bytes, BytesMut};
use curupira_framing::{DecodeError, FrameCodec, FrameDecoder, FrameEncoder};
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::{Decoder, Encoder, Framed, FramedRead, FramedWrite};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn framed_write_then_framed_read_round_trip() {
    runtime().block_on(async {
        let (client, server) = tokio::io::duplex(64);
        let bodies: Vec<Bytes> = vec![
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#),
            Bytes::new(),
            Bytes::from(vec![b'z'; 1000]),
        ];
        let writer = {
            let bodies = bodies.clone();
            tokio::spawn(async move {
                let mut sink = FramedWrite::new(client, FrameEncoder::new());
                for body in bodies {
                    sink.send(body).await.unwrap();
                }
                SinkExt::<Bytes>::close(&mut sink).await.unwrap();
            })
        };
        let got: Vec<Bytes> = FramedRead::new(server, FrameDecoder::new())
            .map(|frame| frame.unwrap())
            .collect()
            .await;
        writer.await.unwrap();
        assert_eq!(got, bodies);
    });
}

#[test]
fn framed_read_reports_truncation_at_eof() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"00000002{}0000000a{\"a\"").await.unwrap();
        drop(client);
        let mut frames = FramedRead::new(server, FrameDecoder::new());
        assert_eq!(frames.next().await.unwrap().unwrap(), "{}");
        let err = frames.next().await.unwrap().unwrap_err();
        assert!(matches!(
            err,
            DecodeError::TruncatedBody {
                offset: 18,
                expected: 10,
                got: 4
            }
        ));
        assert!(frames.next().await.is_none());
    });
}

#[test]
fn framed_read_refuses_a_bad_header_and_stops() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"00000001a+0000001b").await.unwrap();
        drop(client);
        let mut frames = FramedRead::new(server, FrameDecoder::new());
        assert_eq!(frames.next().await.unwrap().unwrap(), "a");
        let err = frames.next().await.unwrap().unwrap_err();
        assert!(matches!(
            err,
            DecodeError::BadHeaderByte {
                byte: b'+',
                offset: 9,
                ..
            }
        ));
        assert!(frames.next().await.is_none());
    });
}

#[test]
fn framed_read_refuses_four_gib_before_any_body() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"ffffffff").await.unwrap();
        // The writer stays open: the error must come from the header alone.
        let mut frames = FramedRead::new(server, FrameDecoder::new());
        let err = frames.next().await.unwrap().unwrap_err();
        assert!(matches!(
            err,
            DecodeError::TooLarge {
                announced: u32::MAX,
                offset: 0,
                ..
            }
        ));
        drop(client);
    });
}

#[test]
fn framed_duplex_with_the_codec() {
    runtime().block_on(async {
        let (a, b) = tokio::io::duplex(16);
        let mut left = Framed::new(a, FrameCodec::new());
        let mut right = Framed::new(b, FrameCodec::with_max_body(4));
        left.send(&b"ping"[..]).await.unwrap();
        assert_eq!(right.next().await.unwrap().unwrap(), "ping");
        right.send(Bytes::from_static(b"pong")).await.unwrap();
        assert_eq!(left.next().await.unwrap().unwrap(), "pong");
        // The right side's encoder enforces its maximum too.
        let err = right.send(&b"toolong"[..]).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("7 bytes, more than the maximum of 4")
        );
    });
}

#[test]
fn codec_traits_match_the_inherent_methods() {
    let mut codec = FrameCodec::with_max_body(8);
    assert_eq!(codec.decoder().max_body(), 8);
    assert_eq!(codec.encoder().max_body(), 8);
    let mut buf = BytesMut::new();
    Encoder::encode(&mut codec, b"12345678".to_vec(), &mut buf).unwrap();
    assert_eq!(&buf[..], b"0000000812345678");
    assert_eq!(
        Decoder::decode(&mut codec, &mut buf).unwrap().unwrap(),
        "12345678"
    );
    assert!(Decoder::decode_eof(&mut codec, &mut buf).unwrap().is_none());
    buf.extend_from_slice(b"00000009");
    assert!(matches!(
        Decoder::decode(&mut codec, &mut buf),
        Err(DecodeError::TooLarge {
            announced: 9,
            max: 8,
            offset: 16
        })
    ));
}
