//! The one walk of the rewrites of a parsed CEL expression
//! ([`edit_each`]): pointing operators at hub's functions (`cel.rs`) and
//! adding the budget's meter (`budget.rs`).

use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr};

/// Every node of `root`, each given to `edit` before its children are
/// visited (so that what `edit` puts in is visited too), without
/// recursion: the one walk of the rewrites of a parsed expression.
pub(super) fn edit_each(root: &mut IdedExpr, mut edit: impl FnMut(&mut IdedExpr)) {
    let mut pending: Vec<&mut IdedExpr> = vec![root];
    while let Some(node) = pending.pop() {
        edit(node);
        match &mut node.expr {
            Expr::Call(call) => {
                if let Some(target) = call.target.as_deref_mut() {
                    pending.push(target);
                }
                pending.extend(call.args.iter_mut());
            }
            Expr::Comprehension(c) => {
                let c = c.as_mut();
                pending.extend([
                    &mut c.iter_range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ]);
            }
            Expr::List(list) => pending.extend(list.elements.iter_mut()),
            Expr::Map(map) => map
                .entries
                .iter_mut()
                .for_each(|e| entry_children(e, &mut pending)),
            Expr::Struct(s) => s
                .entries
                .iter_mut()
                .for_each(|e| entry_children(e, &mut pending)),
            Expr::Select(select) => pending.push(&mut select.operand),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

/// The expressions of a map or struct entry, for [`edit_each`].
fn entry_children<'a>(entry: &'a mut IdedEntryExpr, pending: &mut Vec<&'a mut IdedExpr>) {
    match &mut entry.expr {
        EntryExpr::MapEntry(e) => pending.extend([&mut e.key, &mut e.value]),
        EntryExpr::StructField(field) => pending.push(&mut field.value),
    }
}
