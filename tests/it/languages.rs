//! The seven languages read through the shared walk: each fixture's
//! exact call, base and import edges, from a real `rpg init`.

use crate::common::{fixture, repo_of};
use rpg::config::Config;
use rpg::encode::{self, Silent};
use rpg::git::Repo;
use rpg::graph::EdgeKind;
use rpg::lift::offline::OfflineLifter;
use std::collections::BTreeSet;

type Edges = BTreeSet<(String, String)>;

/// The fixture's invokes, inherits and imports edges.
fn edges_of(script: &str) -> [Edges; 3] {
    let dir = fixture(script);
    let repo = Repo::discover(&repo_of(&dir)).unwrap();
    let head = repo.resolve("HEAD").unwrap();
    let g = encode::encode(&repo, &Config::default(), head, &OfflineLifter, &Silent)
        .unwrap()
        .graph;
    [EdgeKind::Invokes, EdgeKind::Inherits, EdgeKind::Imports].map(|kind| {
        g.edges
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| (e.src.to_string(), e.dst.to_string()))
            .collect()
    })
}

fn set(list: &[(&str, &str)]) -> Edges {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn check(
    script: &str,
    invokes: &[(&str, &str)],
    inherits: &[(&str, &str)],
    imports: &[(&str, &str)],
) {
    let [i, h, m] = edges_of(script);
    assert_eq!(i, set(invokes), "invokes of {script}");
    assert_eq!(h, set(inherits), "inherits of {script}");
    assert_eq!(m, set(imports), "imports of {script}");
}

/// C#: a partial class's members and its base, across files; usings; typed fields.
#[test]
fn csharp_fixture_links_calls_bases_and_imports() {
    check(
        "csharp-repo.sh",
        &[
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart",
                "src/Shop/Util/Strings.cs:Shop.Util.Store",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Save",
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Total",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Save",
                "src/Shop/Models/CartCount.cs:Shop.Models.Base.Close",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Save",
                "src/Shop/Models/CartCount.cs:Shop.Models.Cart.Validate",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Save",
                "src/Shop/Util/Strings.cs:Shop.Util.Store.Put",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Total",
                "src/Shop/Models/CartCount.cs:Shop.Models.Cart.Count",
            ),
            (
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Total",
                "src/Shop/Util/Strings.cs:Shop.Util.Strings.Clean",
            ),
            (
                "tests/Shop.Tests/CartTests.cs:CartTests.TotalIsClean",
                "src/Shop/Models/Cart.cs:Shop.Models.Cart",
            ),
            (
                "tests/Shop.Tests/CartTests.cs:CartTests.TotalIsClean",
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Total",
            ),
        ],
        &[(
            "src/Shop/Models/Cart.cs:Shop.Models.Cart",
            "src/Shop/Models/CartCount.cs:Shop.Models.Base",
        )],
        // `using Shop.Util;` imports the namespace's files the code uses.
        &[
            ("src/Shop/Models/Cart.cs", "src/Shop/Util/Strings.cs"),
            ("tests/Shop.Tests/CartTests.cs", "src/Shop/Models/Cart.cs"),
        ],
    );
}

/// PHP: `use`, `require`, traits as bases, `$this`, `self::`, typed parameters.
#[test]
fn php_fixture_links_calls_bases_and_imports() {
    check(
        "php-repo.sh",
        &[
            (
                "src/Models/Cart.php:Cart.total",
                "src/Models/Cart.php:Cart.validate",
            ),
            (
                "src/Models/Cart.php:Cart.total",
                "src/Models/Model.php:Counts.count",
            ),
            (
                "src/Models/Cart.php:Cart.total",
                "src/Support/Store.php:Store.put",
            ),
            (
                "src/Models/Cart.php:Cart.total",
                "src/helpers.php:clean_total",
            ),
            (
                "src/Models/Cart.php:Cart.validate",
                "src/Models/Cart.php:Cart.check",
            ),
            (
                "tests/CartTest.php:CartTest.testTotal",
                "src/Models/Cart.php:Cart",
            ),
            (
                "tests/CartTest.php:CartTest.testTotal",
                "src/Models/Cart.php:Cart.total",
            ),
        ],
        &[
            ("src/Models/Cart.php:Cart", "src/Models/Model.php:Counts"),
            ("src/Models/Cart.php:Cart", "src/Models/Model.php:Model"),
        ],
        &[
            ("src/Models/Cart.php", "src/Support/Store.php"),
            ("src/Models/Cart.php", "src/helpers.php"),
            ("tests/CartTest.php", "src/Models/Cart.php"),
        ],
    );
}

/// Ruby: a class reopened in another file, mixins, `require_relative`, bare method calls.
#[test]
fn ruby_fixture_links_calls_bases_and_imports() {
    check(
        "ruby-repo.sh",
        &[
            ("lib/shop.rb:Shop.open", "lib/shop/cart.rb:Shop.Cart.build"),
            (
                "lib/shop/cart.rb:Shop.Cart.total",
                "lib/shop/tax.rb:Shop.Cart.validate",
            ),
            (
                "lib/shop/cart.rb:Shop.Cart.total",
                "lib/shop/tax.rb:Shop.Counting.count",
            ),
            (
                "lib/shop/cart.rb:Shop.Cart.total",
                "lib/shop/tax.rb:Shop.Tax.rate",
            ),
            (
                "lib/shop/tax.rb:Shop.Cart.validate",
                "lib/shop/tax.rb:Shop.Base.close",
            ),
            ("spec/cart_spec.rb", "lib/shop/cart.rb:Shop.Cart.total"),
        ],
        &[
            ("lib/shop/cart.rb:Shop.Cart", "lib/shop/tax.rb:Shop.Base"),
            (
                "lib/shop/cart.rb:Shop.Cart",
                "lib/shop/tax.rb:Shop.Counting",
            ),
        ],
        &[
            ("lib/shop.rb", "lib/shop/cart.rb"),
            ("lib/shop.rb", "lib/shop/tax.rb"),
            ("lib/shop/cart.rb", "lib/shop/tax.rb"),
            ("spec/cart_spec.rb", "lib/shop.rb"),
        ],
    );
}

/// Kotlin: imports by package directory, a companion object, an extension function.
#[test]
fn kotlin_fixture_links_calls_bases_and_imports() {
    check(
        "kotlin-repo.sh",
        &[
            (
                "src/main/kotlin/com/shop/cart/Base.kt:Base.validate",
                "src/main/kotlin/com/shop/cart/Base.kt:Base.close",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.Companion.build",
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.Companion.build",
                "src/main/kotlin/com/shop/util/Store.kt:Store",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
                "src/main/kotlin/com/shop/cart/Base.kt:Base.validate",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.count",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
                "src/main/kotlin/com/shop/util/Store.kt:Int.clean",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
                "src/main/kotlin/com/shop/util/Store.kt:Store.put",
            ),
            (
                "src/test/kotlin/com/shop/CartTest.kt:CartTest.totals",
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
            ),
        ],
        &[
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart",
                "src/main/kotlin/com/shop/cart/Base.kt:Base",
            ),
            (
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart",
                "src/main/kotlin/com/shop/cart/Base.kt:Countable",
            ),
        ],
        &[
            (
                "src/main/kotlin/com/shop/cart/Cart.kt",
                "src/main/kotlin/com/shop/util/Store.kt",
            ),
            (
                "src/test/kotlin/com/shop/CartTest.kt",
                "src/main/kotlin/com/shop/cart/Cart.kt",
            ),
        ],
    );
}

/// Swift: an extension in another file wins over the protocol; the class, not its extension.
#[test]
fn swift_fixture_links_calls_bases_and_imports() {
    check(
        "swift-repo.sh",
        &[
            (
                "Sources/Shop/Cart+Counting.swift:Cart.validate",
                "Sources/Shop/Store.swift:Base.close",
            ),
            (
                "Sources/Shop/Cart.swift:Cart.init",
                "Sources/Shop/Store.swift:Base.setup",
            ),
            (
                "Sources/Shop/Cart.swift:Cart.total",
                "Sources/Shop/Cart+Counting.swift:Cart.count",
            ),
            (
                "Sources/Shop/Cart.swift:Cart.total",
                "Sources/Shop/Cart+Counting.swift:Cart.validate",
            ),
            (
                "Sources/Shop/Cart.swift:Cart.total",
                "Sources/Shop/Store.swift:Store.put",
            ),
            (
                "Tests/ShopTests/CartTests.swift:CartTests.testTotal",
                "Sources/Shop/Cart.swift:Cart",
            ),
            (
                "Tests/ShopTests/CartTests.swift:CartTests.testTotal",
                "Sources/Shop/Cart.swift:Cart.total",
            ),
            (
                "Tests/ShopTests/CartTests.swift:CartTests.testTotal",
                "Sources/Shop/Store.swift:Store",
            ),
        ],
        &[
            (
                "Sources/Shop/Cart.swift:Cart",
                "Sources/Shop/Store.swift:Base",
            ),
            (
                "Sources/Shop/Cart.swift:Cart",
                "Sources/Shop/Store.swift:Countable",
            ),
        ],
        // `@testable import Shop`: the module's files the tests use.
        &[
            ("Tests/ShopTests/CartTests.swift", "Sources/Shop/Cart.swift"),
            (
                "Tests/ShopTests/CartTests.swift",
                "Sources/Shop/Store.swift",
            ),
        ],
    );
}

/// Scala: selector imports, a trait mixed in, a companion object beside its class.
#[test]
fn scala_fixture_links_calls_bases_and_imports() {
    check(
        "scala-repo.sh",
        &[
            (
                "src/main/scala/shop/cart/Base.scala:Base.validate",
                "src/main/scala/shop/cart/Base.scala:Base.close",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.build",
                "src/main/scala/shop/cart/Cart.scala:Cart",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.build",
                "src/main/scala/shop/util/Store.scala:Store",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
                "src/main/scala/shop/cart/Base.scala:Base.validate",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
                "src/main/scala/shop/cart/Base.scala:Counting.count",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
                "src/main/scala/shop/util/Store.scala:Store.put",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
                "src/main/scala/shop/util/Store.scala:Strings.clean",
            ),
            (
                "src/test/scala/shop/CartSpec.scala:CartSpec.totals",
                "src/main/scala/shop/cart/Cart.scala:Cart.build",
            ),
            (
                "src/test/scala/shop/CartSpec.scala:CartSpec.totals",
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
            ),
        ],
        &[
            (
                "src/main/scala/shop/cart/Cart.scala:Cart",
                "src/main/scala/shop/cart/Base.scala:Base",
            ),
            (
                "src/main/scala/shop/cart/Cart.scala:Cart",
                "src/main/scala/shop/cart/Base.scala:Counting",
            ),
        ],
        &[
            (
                "src/main/scala/shop/cart/Cart.scala",
                "src/main/scala/shop/util/Store.scala",
            ),
            (
                "src/test/scala/shop/CartSpec.scala",
                "src/main/scala/shop/cart/Cart.scala",
            ),
        ],
    );
}

/// Bash: `source` through `$DIR`, both function forms, commands as calls;
/// a zsh plugin read function by function, past the expansions bash lacks.
#[test]
fn bash_fixture_links_calls_bases_and_imports() {
    check(
        "bash-repo.sh",
        &[
            ("bin/install.sh", "bin/install.sh:install_to"),
            ("bin/install.sh:install_to", "lib/util.sh:clean_path"),
            ("bin/install.sh:install_to", "lib/util.sh:log_err"),
            ("lib/prompt.zsh:prompt_path", "lib/util.sh:clean_path"),
            ("lib/prompt.zsh:prompt_render", "lib/prompt.zsh:prompt_path"),
            ("lib/util.sh:clean_path", "lib/util.sh:log_err"),
        ],
        &[],
        &[
            ("bin/install.sh", "lib/util.sh"),
            ("lib/prompt.zsh", "lib/util.sh"),
        ],
    );
}

/// Each language's stack frames, pasted into an issue, put the functions
/// they name first, through the real CLI.
#[test]
fn stack_frames_of_each_language_lead_locate_to_their_functions() {
    let cases: [(&str, &str, [&str; 2]); 6] = [
        (
            "csharp-repo.sh",
            "Crash on save\n\nSystem.NullReferenceException\n   at Shop.Models.Cart.Validate() in /build/src/Shop/Models/CartCount.cs:line 7\n   at Shop.Models.Cart.Save() in /build/src/Shop/Models/Cart.cs:line 17",
            [
                "src/Shop/Models/CartCount.cs:Shop.Models.Cart.Validate",
                "src/Shop/Models/Cart.cs:Shop.Models.Cart.Save",
            ],
        ),
        (
            "php-repo.sh",
            "Fatal error\n#0 /var/www/src/Models/Cart.php(19): App\\Models\\Cart->validate()\n#1 /var/www/src/Models/Cart.php(14): App\\Models\\Cart->total()",
            ["src/Models/Cart.php:Cart.validate", "src/Models/Cart.php:Cart.total"],
        ),
        (
            "ruby-repo.sh",
            "Crash in totals\n\nlib/shop/tax.rb:20:in 'Shop::Cart#validate'\nlib/shop/cart.rb:13:in 'total'",
            ["lib/shop/tax.rb:Shop.Cart.validate", "lib/shop/cart.rb:Shop.Cart.total"],
        ),
        (
            "kotlin-repo.sh",
            "Crash\n\tat com.shop.cart.Base.validate(Base.kt:5)\n\tat com.shop.cart.Cart.total(Cart.kt:10)",
            [
                "src/main/kotlin/com/shop/cart/Base.kt:Base.validate",
                "src/main/kotlin/com/shop/cart/Cart.kt:Cart.total",
            ],
        ),
        (
            "swift-repo.sh",
            "Crash\n3   Shop  0x0000000100003f Cart.validate(_:) + 52 (Cart+Counting.swift:4)\n4   Shop  0x0000000100004a Cart.total(_:) + 20 (Cart.swift:13)",
            [
                "Sources/Shop/Cart+Counting.swift:Cart.validate",
                "Sources/Shop/Cart.swift:Cart.total",
            ],
        ),
        (
            "scala-repo.sh",
            "Crash\n\tat shop.cart.Base.validate(Base.scala:4)\n\tat shop.cart.Cart.total(Cart.scala:8)",
            [
                "src/main/scala/shop/cart/Base.scala:Base.validate",
                "src/main/scala/shop/cart/Cart.scala:Cart.total",
            ],
        ),
    ];
    for (script, issue, want) in cases {
        let d = fixture(script);
        let repo = repo_of(&d);
        crate::common::ok(crate::common::rpg(&repo, &["init"]));
        let out = crate::common::ok(crate::common::rpg(&repo, &["locate", "--json", issue]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let top: BTreeSet<&str> = v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .take(2)
            .map(|f| f["id"].as_str().unwrap())
            .collect();
        assert_eq!(top, want.into_iter().collect(), "{script}");
    }
}
