//! Ranking with earned utility: the bounded rank prior ([`prior`], utility Stage 3) that
//! re-orders semantic candidates by item-level utility, and the held-out ranking
//! evaluation ([`evaluate`], Stage 4) whose verdict gates `recall --rank-prior`.

pub mod evaluate;
pub mod prior;
