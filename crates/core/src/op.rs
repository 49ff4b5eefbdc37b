//! Operation kinds: what the workload asks for and what results are keyed by.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OpKind {
    #[serde(rename = "READ")]
    Read,
    #[serde(rename = "UPDATE")]
    Update,
    #[serde(rename = "INSERT")]
    Insert,
    #[serde(rename = "SCAN")]
    Scan,
    #[serde(rename = "READ-MODIFY-WRITE")]
    ReadModifyWrite,
    #[serde(rename = "DELETE")]
    Delete,
    /// One multi-record insert of the load phase (`db.batchsize` > 1): its
    /// latency is the batch's, its `rows` the records it inserted.
    #[serde(rename = "BATCH-INSERT")]
    BatchInsert,
    /// TPC-C's five transactions (`yardstick tpcc run`), each one database
    /// transaction timed from its first attempt to its end.
    #[serde(rename = "NEW-ORDER")]
    NewOrder,
    #[serde(rename = "PAYMENT")]
    Payment,
    #[serde(rename = "ORDER-STATUS")]
    OrderStatus,
    #[serde(rename = "DELIVERY")]
    Delivery,
    #[serde(rename = "STOCK-LEVEL")]
    StockLevel,
}

impl OpKind {
    pub const COUNT: usize = 12;
    pub const ALL: [OpKind; OpKind::COUNT] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Delete,
        OpKind::BatchInsert,
        OpKind::NewOrder,
        OpKind::Payment,
        OpKind::OrderStatus,
        OpKind::Delivery,
        OpKind::StockLevel,
    ];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// One of TPC-C's transactions.
    pub fn is_tpcc(self) -> bool {
        self.index() >= OpKind::NewOrder.index()
    }

    /// YCSB's measurement name.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            OpKind::Delete => "DELETE",
            OpKind::BatchInsert => "BATCH-INSERT",
            OpKind::NewOrder => "NEW-ORDER",
            OpKind::Payment => "PAYMENT",
            OpKind::OrderStatus => "ORDER-STATUS",
            OpKind::Delivery => "DELIVERY",
            OpKind::StockLevel => "STOCK-LEVEL",
        }
    }
}
