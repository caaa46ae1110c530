//! The plain objects the package hands to JavaScript (results, events,
//! markers, placeholders), as the core lays them out: which fields, in
//! which order, which are left out and which are present but `undefined`.
//! The binding turns a [`Shape`] into an object with one function, so that
//! none of these choices is made where it cannot be tested natively.
//! `V` is whatever value the caller passes through untouched (in the
//! binding, a JavaScript value: the caller's own objects, arrays, strings).

/// One field's value.
#[derive(Debug, PartialEq)]
pub enum Field<V> {
    /// A string the core wrote.
    Str(&'static str),
    /// A string the core composed.
    String(String),
    Number(f64),
    Bool(bool),
    Null,
    /// Present, with the value `undefined` (`"key" in object` is true).
    Undefined,
    /// A value passed through as it is.
    Value(V),
    /// A nested plain object.
    Object(Shape<V>),
    /// An array of these.
    List(Vec<Field<V>>),
}

/// A plain object: its fields in the order they are set.
#[derive(Debug, PartialEq)]
pub struct Shape<V>(pub Vec<(&'static str, Field<V>)>);

impl<V> Shape<V> {
    /// The object of these fields, in this order.
    pub fn of<const N: usize>(fields: [(&'static str, Field<V>); N]) -> Shape<V> {
        Shape(Vec::from(fields))
    }

    /// Adds `key` last.
    pub fn push(&mut self, key: &'static str, value: Field<V>) {
        self.0.push((key, value));
    }

    /// Adds `key` last when `value` is there; else the field is left out.
    pub fn push_some(&mut self, key: &'static str, value: Option<Field<V>>) {
        if let Some(value) = value {
            self.push(key, value);
        }
    }

    /// The field `key`, if the object has it.
    pub fn get(&self, key: &str) -> Option<&Field<V>> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The keys in order.
    pub fn keys(&self) -> Vec<&'static str> {
        self.0.iter().map(|(k, _)| *k).collect()
    }
}

impl<V> Field<V> {
    /// A count or index as a JavaScript number.
    pub fn count(n: usize) -> Field<V> {
        Field::Number(n as f64)
    }

    /// `value`, or `undefined` when there is none.
    pub fn or_undefined(value: Option<V>) -> Field<V> {
        value.map_or(Field::Undefined, Field::Value)
    }
}

/// The object as JSON-like text, for tests: numbers as JavaScript prints
/// them (`5`, not `5.0`), `undefined` as such, passed-through values by
/// their `Debug`.
#[cfg(test)]
pub(crate) fn text(shape: &Shape<&str>) -> String {
    fn field(f: &Field<&str>) -> String {
        match f {
            Field::Str(s) => format!("{s:?}"),
            Field::String(s) => format!("{s:?}"),
            Field::Number(n) => n.to_string(),
            Field::Bool(b) => b.to_string(),
            Field::Null => "null".into(),
            Field::Undefined => "undefined".into(),
            Field::Value(v) => format!("{v:?}"),
            Field::Object(o) => text(o),
            Field::List(items) => {
                format!(
                    "[{}]",
                    items.iter().map(field).collect::<Vec<_>>().join(",")
                )
            }
        }
    }
    let fields: Vec<String> = (shape.0.iter())
        .map(|(k, v)| format!("{k:?}:{}", field(v)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_order_and_absent_ones_are_left_out() {
        let mut s: Shape<&str> = Shape::of([("a", Field::Number(1.0)), ("b", Field::Str("x"))]);
        s.push_some("c", None);
        s.push_some("d", Some(Field::Bool(true)));
        s.push("e", Field::or_undefined(None));
        s.push("f", Field::or_undefined(Some("v")));
        assert_eq!(s.keys(), ["a", "b", "d", "e", "f"]);
        assert_eq!(s.get("e"), Some(&Field::Undefined));
        assert_eq!(s.get("f"), Some(&Field::Value("v")));
        assert_eq!(s.get("c"), None);
        assert_eq!(Field::<()>::count(3), Field::Number(3.0));
        assert_eq!(
            text(&s),
            r#"{"a":1,"b":"x","d":true,"e":undefined,"f":"v"}"#
        );
    }
}
