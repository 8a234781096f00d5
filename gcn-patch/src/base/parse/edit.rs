//! Editing one line's value while keeping its layout byte-for-byte: what
//! the retarget stage and `set` rules share.

use super::strip_comment;

/// Replace the value of a descriptor field (`.amdhsa_x 1`), `.set` line
/// (`.set sym, 1`), metadata entry (`.key: 1`, `amdhsa.target: x`) or other
/// `name value` directive, keeping indentation, spacing, a trailing comment
/// and a `\r`.
pub fn replace_value(line: &str, value: &str) -> String {
    let (body, cr) = match line.strip_suffix('\r') {
        Some(b) => (b, "\r"),
        None => (line, ""),
    };
    let code_end = strip_comment(body).trim_end().len();
    let comment = &body[code_end..];
    let code = &body[..code_end];
    let t = code.trim_start();
    let ind = &code[..code.len() - t.len()];
    if t.starts_with(".set") {
        if let Some(c) = code.find(',') {
            let after = &code[c + 1..];
            let ws = &after[..after.len() - after.trim_start().len()];
            return format!("{}{ws}{value}{comment}{cr}", &code[..=c]);
        }
    }
    if let Some(c) = t
        .find(':')
        .filter(|_| !t.starts_with(".amdhsa_") && t.starts_with(['.', '-']))
    {
        let after = &t[c + 1..];
        let ws = &after[..after.len() - after.trim_start().len()];
        return format!("{ind}{}{ws}{value}{comment}{cr}", &t[..=c]);
    }
    let key_end = t.find(char::is_whitespace).unwrap_or(t.len());
    let after = &t[key_end..];
    let ws = &after[..after.len() - after.trim_start().len()];
    format!(
        "{ind}{}{}{value}{comment}{cr}",
        &t[..key_end],
        if ws.is_empty() { " " } else { ws }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_value_keeps_layout() {
        assert_eq!(
            replace_value("\t\t.amdhsa_next_free_vgpr 257", "128"),
            "\t\t.amdhsa_next_free_vgpr 128"
        );
        assert_eq!(
            replace_value("    .vgpr_count:     112", "128"),
            "    .vgpr_count:     128"
        );
        assert_eq!(
            replace_value("\t.set .Lk.num_vgpr, 112", "128"),
            "\t.set .Lk.num_vgpr, 128"
        );
        assert_eq!(
            replace_value("\t\t.amdhsa_reserve_xnack_mask 1 ; c\r", "0"),
            "\t\t.amdhsa_reserve_xnack_mask 0 ; c\r"
        );
        assert_eq!(
            replace_value(
                "amdhsa.target:   amdgpu9.42-amd-amdhsa-unknown-gfx942\r",
                "'a:b'"
            ),
            "amdhsa.target:   'a:b'\r"
        );
    }
}
