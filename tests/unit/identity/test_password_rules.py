from chalicelib.identity.password_rules import MIN_LENGTH, password_problems


def test_a_long_uncommon_password_passes():
    assert password_problems("violet kettle under 7 bridges", "ada@example.com") == []


def test_too_short():
    assert password_problems("a", "ada@example.com") == [f"must be at least {MIN_LENGTH} characters long"]
    assert password_problems("x7#kQ2!pz", "ada@example.com") != []
    assert password_problems("x7#kQ2!pzL", "ada@example.com") == []


def test_common_passwords_are_refused_whatever_their_case():
    for common in ("password123", "1q2w3e4r5t", "Manchester"):
        assert password_problems(common, "ada@example.com") == ["is one of the most common passwords"], common
    assert password_problems("QWERTYUIOP", "ada@example.com") == [
        "must not be a simple sequence (like 0123456789, abcdefghij or qwertyuiop)",
        "is one of the most common passwords",
    ]


def test_the_user_name_or_its_local_part_is_refused():
    assert password_problems("ada.lovelace@example.com", "Ada.Lovelace@example.com") == ["must not be the user name"]
    assert password_problems("ada.lovelace", "ada.lovelace@example.com") == ["must not be the user name"]


def test_the_list_is_read_only_when_a_password_is_checked():
    import subprocess
    import sys

    probe = (
        "import chalicelib.identity.service as s, chalicelib.identity.password_rules as r;"
        "print(r._common_passwords.cache_info().currsize)"
    )
    assert (
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "0"
    )


def test_shape_rules_look_at_the_visible_characters_once_the_length_is_right():
    blank, repeated, sequence = (
        "must not be blank (whitespace only)",
        "must not be one character repeated",
        "must not be a simple sequence (like 0123456789, abcdefghij or qwertyuiop)",
    )
    assert password_problems(" " * 9, "ada@example.com") == [f"must be at least {MIN_LENGTH} characters long"]
    assert password_problems("\u200b\ufeff\u2028\u00a0\t" * 2, "ada@example.com") == [blank]
    assert password_problems("         x", "ada@example.com") == [repeated]
    assert password_problems("Zz zZ zz ZZ", "ada@example.com") == [repeated]
    for trivial in (
        "  ab      ",
        "7890123456",
        "][poiuytrewq",
        "+_)(*&^%$#@",
        "=-0987654321",
        "jihgfedcba",
        "abc def ghij",
    ):
        assert password_problems(trivial, "ada@example.com") == [sequence], trivial
    for fine in ("acegikmoqs", "0123456789a", "qwertyuiopasdf", "abcdefghiz"):
        assert sequence not in password_problems(fine, "ada@example.com"), fine
