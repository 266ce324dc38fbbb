//! Splitting a Windows command line into its arguments, the way a program's C runtime (and
//! `CommandLineToArgvW`) does. The SCM stores a service's program and arguments as one quoted
//! string; splitting it back lets `install-service` compare what is registered with what it
//! would register, whatever quoting the registering tool used.

/// Splits `line` into the program and its arguments.
///
/// The program is read without escapes: up to the closing quote when it starts with one, else up
/// to the first space or tab. In the arguments, spaces and tabs separate outside quotes; `2n`
/// backslashes before a quote give `n` backslashes and the quote opens or closes a quoted part;
/// `2n+1` give `n` backslashes and a literal quote; `""` inside a quoted part is a literal quote;
/// other backslashes are literal.
pub fn split(line: &str) -> Vec<String> {
    let mut chars = line.chars().peekable();
    let mut arguments = Vec::new();

    let mut program = String::new();
    if chars.peek() == Some(&'"') {
        chars.next();
        for c in chars.by_ref() {
            if c == '"' {
                break;
            }
            program.push(c);
        }
    }
    while let Some(&c) = chars.peek() {
        if is_blank(c) {
            break;
        }
        program.push(c);
        chars.next();
    }
    arguments.push(program);

    loop {
        while chars.peek().is_some_and(|&c| is_blank(c)) {
            chars.next();
        }
        if chars.peek().is_none() {
            return arguments;
        }
        let mut argument = String::new();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let mut backslashes = 1;
                    while chars.peek() == Some(&'\\') {
                        chars.next();
                        backslashes += 1;
                    }
                    if chars.peek() == Some(&'"') {
                        argument.extend(std::iter::repeat_n('\\', backslashes / 2));
                        if backslashes % 2 == 1 {
                            chars.next();
                            argument.push('"');
                        }
                    } else {
                        argument.extend(std::iter::repeat_n('\\', backslashes));
                    }
                }
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    argument.push('"');
                }
                '"' => quoted = !quoted,
                c if is_blank(c) && !quoted => break,
                c => argument.push(c),
            }
        }
        arguments.push(argument);
    }
}

/// Joins `parts` (the program, then its arguments) into a command line [`split`] reads back as
/// `parts`: the program quoted when it has a blank, an argument quoted when it is empty or has a
/// blank or a quote, with the backslashes before a quote (and before the closing quote) doubled.
pub fn join(parts: &[String]) -> String {
    let mut line = String::new();
    let Some((program, arguments)) = parts.split_first() else {
        return line;
    };
    if program.contains(is_blank) {
        line.push('"');
        line.push_str(program);
        line.push('"');
    } else {
        line.push_str(program);
    }
    for argument in arguments {
        line.push(' ');
        if !argument.is_empty() && !argument.contains(|c| is_blank(c) || c == '"') {
            line.push_str(argument);
            continue;
        }
        line.push('"');
        let mut backslashes = 0;
        for c in argument.chars() {
            match c {
                '\\' => backslashes += 1,
                '"' => {
                    line.extend(std::iter::repeat_n('\\', 2 * backslashes + 1));
                    line.push('"');
                    backslashes = 0;
                }
                c => {
                    line.extend(std::iter::repeat_n('\\', backslashes));
                    line.push(c);
                    backslashes = 0;
                }
            }
        }
        line.extend(std::iter::repeat_n('\\', 2 * backslashes));
        line.push('"');
    }
    line
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[cfg(test)]
mod tests {
    use super::{join, split};

    #[test]
    fn joined_arguments_split_back() {
        let cases: [&[&str]; 4] = [
            &[
                r"C:\openvswitch\usr\sbin\ovsdb-server.exe",
                "-vfile:info",
                "--pidfile",
            ],
            &[
                r"C:\Program Files\a.exe",
                "",
                r"C:\my dir\",
                r#"say "hi""#,
                r#"\"x"#,
            ],
            &["a.exe", r"\\server\share\", "tab\there", r#"a\\\"b c"#],
            &["a.exe"],
        ];
        for parts in cases {
            let parts: Vec<String> = parts.iter().map(|part| (*part).to_owned()).collect();
            assert_eq!(split(&join(&parts)), parts, "{}", join(&parts));
        }
        assert_eq!(
            join(&[r"C:\Program Files\a.exe".into(), "x y".into(), "z".into()]),
            r#""C:\Program Files\a.exe" "x y" z"#
        );
    }

    #[test]
    fn plain_words() {
        assert_eq!(
            split(r"C:\antrea\antrea-agent.exe run-service --config C:\etc\a.conf"),
            [
                r"C:\antrea\antrea-agent.exe",
                "run-service",
                "--config",
                r"C:\etc\a.conf"
            ]
        );
    }

    #[test]
    fn quoted_program_keeps_its_backslashes_and_spaces() {
        assert_eq!(
            split(r#""C:\Program Files\antrea\antrea-agent.exe"  run-service"#),
            [r"C:\Program Files\antrea\antrea-agent.exe", "run-service"]
        );
    }

    #[test]
    fn quoted_argument_with_spaces_and_a_trailing_backslash() {
        // A quoted path ending in a backslash doubles it before the closing quote.
        assert_eq!(
            split(r#"a.exe --cluster-dir "C:\my cluster\\" --x"#),
            ["a.exe", "--cluster-dir", r"C:\my cluster\", "--x"]
        );
    }

    #[test]
    fn escaped_quotes_and_empty_arguments() {
        assert_eq!(
            split(r#"a.exe "" say\"hi\" "in ""quotes""" \\\"x"#),
            ["a.exe", "", r#"say"hi""#, r#"in "quotes""#, r#"\"x"#]
        );
    }

    #[test]
    fn backslashes_not_before_a_quote_are_literal() {
        assert_eq!(
            split(r"a.exe \\server\share\ b"),
            ["a.exe", r"\\server\share\", "b"]
        );
    }

    #[test]
    fn tabs_separate_and_the_end_may_be_blank() {
        assert_eq!(split("a.exe\tx \t y\t "), ["a.exe", "x", "y"]);
        assert_eq!(split(""), [""]);
    }
}
